"""Extension against training from scratch, on the same files, in the same run.

    python bench/extend.py [--parent-corpus PATH] [--corpus PATH] [--parent-size 8000]
                           [--new 2000] [--repeat 1]

A parent is trained on ``--parent-corpus`` to ``--parent-size`` tokens (not timed). Then, each in
a fresh child process, taking turns: ``extend`` continues the parent's merges on ``--corpus`` by
``--new`` tokens (``bpe.extension.extend_bpe``); ``scratch-total`` trains from scratch on
``--corpus`` to the child's total (parent + new); ``scratch-new`` trains from scratch on
``--corpus`` to 256 + ``--new`` tokens (the cost of learning the new merges alone). The script
prints the best wall time and the peak RSS of each, and the ratios against ``extend``.

Without paths it writes two corpora of ``--mb`` MB each: made-up lowercase words (the parent's
domain) and random CJK text with punctuation (the new one), built from code, not downloaded.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

CHILD = """
import json, resource, sys, time
from pathlib import Path
from tokenizers_app.bpe import load_tokenizer, train_bpe
from tokenizers_app.bpe.compiled import CORE_PATH
from tokenizers_app.bpe.extension import extend_bpe
args = json.loads(sys.argv[1])
start = time.perf_counter()
if args["mode"] == "extend":
    parent = load_tokenizer(args["parent"])
    result = extend_bpe(parent, Path(args["corpus"]), len(parent.vocab) + args["new"])
else:
    result = train_bpe(Path(args["corpus"]), args["vocab_size"], special_tokens=["<|endoftext|>"])
seconds = time.perf_counter() - start
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss + resource.getrusage(
    resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"seconds": seconds, "rss_kb": rss, "vocab": len(result.vocab),
                  "core": CORE_PATH}))
"""


def run(args: dict) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(args)], cwd=REPO, check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def write_corpora(folder: Path, megabytes: float) -> tuple[Path, Path]:
    from tests.bpe.corpora import _random_cjk

    size = int(megabytes * 1e6)
    words, cjk = folder / "words.txt", folder / "cjk.txt"
    rng = random.Random(3)
    made_up = [" ".join("".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(2, 9)))
                        for _ in range(12)) + "\n" for _ in range(size // 70)]
    words.write_text("".join(made_up), encoding="utf-8")
    rng = random.Random(5)
    cjk.write_text("".join(_random_cjk(rng, 4000) for _ in range(size // 12000)) + "\n",
                   encoding="utf-8")
    return words, cjk


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parent-corpus", type=Path)
    parser.add_argument("--corpus", type=Path)
    parser.add_argument("--parent-size", type=int, default=8000)
    parser.add_argument("--new", type=int, default=2000)
    parser.add_argument("--mb", type=float, default=4.0)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        parent_corpus, corpus = args.parent_corpus, args.corpus
        if parent_corpus is None or corpus is None:
            parent_corpus, corpus = write_corpora(folder, args.mb)
        from tokenizers_app.bpe import save_tokenizer, train_bpe

        parent = train_bpe(parent_corpus, args.parent_size, ["<|endoftext|>"]).tokenizer()
        [parent_file] = save_tokenizer(parent, folder / "parent.json", "native")
        total = len(parent.vocab) + args.new
        jobs = {"extend": {"mode": "extend", "parent": str(parent_file), "corpus": str(corpus),
                           "new": args.new},
                "scratch-total": {"mode": "scratch", "corpus": str(corpus), "vocab_size": total},
                "scratch-new": {"mode": "scratch", "corpus": str(corpus),
                                "vocab_size": 257 + args.new}}
        results: dict[str, list[dict]] = {name: [] for name in jobs}
        for _ in range(max(1, args.repeat)):
            for name, job in jobs.items():
                results[name].append(run(job))
        print(f"parent: {len(parent.vocab):,} tokens on {parent_corpus.name} "
              f"({parent_corpus.stat().st_size / 1e6:.1f} MB); new corpus {corpus.name} "
              f"({corpus.stat().st_size / 1e6:.1f} MB); +{args.new:,} tokens; core "
              f"{results['extend'][0]['core']}")
    best = {name: (min(r["seconds"] for r in rs), max(r["rss_kb"] for r in rs), rs[0]["vocab"])
            for name, rs in results.items()}
    for name, (seconds, rss, vocab) in best.items():
        ratio = seconds / best["extend"][0]
        print(f"{name:14} {seconds:8.2f} s  {rss / 1024:8.0f} MB peak RSS  {vocab:7,} tokens  "
              f"time x{ratio:.2f} of extend")


if __name__ == "__main__":
    main()
