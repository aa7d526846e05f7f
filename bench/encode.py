"""Encoding: ours against tiktoken and Hugging Face `tokenizers`, GPT-2's vocabulary, one run.

    python bench/encode.py --corpus PATH [--fixtures ../shared/fixtures/gpt2] [--repeat 3]

All three are built from the same GPT-2 `vocab.json` + `merges.txt`. The script prints MB/s for
one thread (one process for ours) and for batch encoding on all cores, the ratios against
tiktoken's one-thread figure, and checks that all three give identical ids. Each encoder runs
``--repeat`` times, taking turns with the others, and its best time counts; ours starts each run
with an empty cache.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.gpt2_peers import build_tiktoken, parse_args, timed  # noqa: E402
from tokenizers_app.bpe import load_tokenizer  # noqa: E402

ENDOFTEXT = "<|endoftext|>"


def build_peers(fixtures: Path, ours):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    tik = build_tiktoken(ours)
    hf = Tokenizer(models.BPE.from_file(str(fixtures / "vocab.json"),
                                        str(fixtures / "merges.txt")))
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    return tik, hf


def main() -> None:
    opts, fixtures = parse_args(__doc__, repeat=True)
    text = Path(opts.corpus).read_text(encoding="utf-8")
    documents = [d for d in text.split(ENDOFTEXT) if d]
    mb = len(text.encode()) / 1e6
    ours = load_tokenizer(fixtures)
    tik, hf = build_peers(fixtures, ours)
    print(f"corpus {opts.corpus} ({mb:.1f} MB, {len(documents)} documents), GPT-2 vocabulary, "
          f"{os.cpu_count()} cores, best of {opts.repeat} runs (ours with a cold cache each run)")

    def cold(encode):
        def run():
            ours.__init__(ours.vocab, ours.merges, ours.special_ids, ours.pattern)  # empty cache
            return encode()
        return run

    encoders = [
        ("ours, one process (cold cache)", cold(lambda: [ours.encode_ordinary(d)
                                                         for d in documents])),
        ("ours, encode_batch (all cores)", cold(lambda: ours.encode_batch(
            documents, disallowed_special=()))),
        ("tiktoken, one thread", lambda: [tik.encode_ordinary(d) for d in documents]),
        ("tiktoken, batch (all cores)", lambda: tik.encode_ordinary_batch(documents)),
        ("HF tokenizers, one thread", lambda: [hf.encode(d, add_special_tokens=False).ids
                                               for d in documents]),
        ("HF tokenizers, batch (all cores)", lambda: [e.ids for e in hf.encode_batch(
            documents, add_special_tokens=False)]),
    ]
    expected = [tik.encode_ordinary(d) for d in documents]
    best = {name: float("inf") for name, _ in encoders}
    same = True
    for _ in range(opts.repeat):  # the encoders take turns, so that drift hits all alike
        for name, encode in encoders:
            ids, seconds = timed(encode)
            best[name] = min(best[name], seconds)
            same = same and ids == expected
            del ids  # hold one copy of the ids (tiktoken's), not one per encoder

    base = mb / best["tiktoken, one thread"]
    print(f"{'encoder':<36}{'MB/s':>8}{'vs tiktoken 1 thread':>24}")
    for name, _ in encoders:
        print(f"{name:<36}{mb / best[name]:>8.2f}{(mb / best[name]) / base:>23.2f}x")
    print("identical ids across all encoders:", "yes" if same else "NO")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
