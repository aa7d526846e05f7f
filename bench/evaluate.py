"""Evaluation: ``evaluate()`` against plain encoding of the same lines, GPT-2's vocabulary, one run.

    python bench/evaluate.py --corpus PATH [--fixtures ../shared/fixtures/gpt2]

Prints MB/s, line by line on one thread, for ours ``encode_ordinary``, ours ``evaluate()`` (all
metrics, and the encode throughput it reports) and tiktoken's ``encode_ordinary`` built from the
same vocabulary, with the ratios against ours ``encode_ordinary``. Each of ours starts from a
freshly loaded tokenizer (a cold cache).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.gpt2_peers import build_tiktoken, parse_args, timed  # noqa: E402
from tokenizers_app.bpe import evaluate, load_tokenizer  # noqa: E402


def main() -> None:
    opts, fixtures = parse_args(__doc__)
    lines = Path(opts.corpus).read_text(encoding="utf-8").splitlines(keepends=True)
    mb = sum(len(line.encode()) for line in lines) / 1e6
    print(f"corpus {opts.corpus} ({mb:.1f} MB, {len(lines)} lines), GPT-2 vocabulary")

    ours = load_tokenizer(fixtures)
    tik = build_tiktoken(ours)
    ours_ids, encode_s = timed(lambda: [ours.encode_ordinary(line) for line in lines])
    fresh = load_tokenizer(fixtures)
    metrics, evaluate_s = timed(lambda: evaluate(fresh, lines))
    tik_ids, tik_s = timed(lambda: [tik.encode_ordinary(line) for line in lines])

    rows = [("ours encode_ordinary", mb / encode_s),
            ("ours evaluate(), all metrics", mb / evaluate_s),
            ("  encode throughput it reports", metrics["encode_throughput_mb_s"]),
            ("tiktoken encode_ordinary", mb / tik_s)]
    print(f"{'line by line, one thread':<36}{'MB/s':>8}{'vs ours encode_ordinary':>26}")
    for name, rate in rows:
        print(f"{name:<36}{rate:>8.2f}{rate / rows[0][1]:>25.2f}x")
    print(f"tokens: {metrics['tokens']} (ours encode_ordinary: {sum(map(len, ours_ids))}), "
          f"ids equal tiktoken's: {'yes' if ours_ids == tik_ids else 'NO'}")
    if ours_ids != tik_ids or metrics["tokens"] != sum(map(len, ours_ids)):
        sys.exit(1)


if __name__ == "__main__":
    main()
