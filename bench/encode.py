"""Encoding: ours against tiktoken and Hugging Face `tokenizers`, GPT-2's vocabulary, one run.

    python bench/encode.py --corpus PATH [--fixtures ../shared/fixtures/gpt2]

All three are built from the same GPT-2 `vocab.json` + `merges.txt`. The script prints MB/s for
one thread (one process for ours) and for batch encoding on all cores, the ratios against
tiktoken's one-thread figure, and checks that all three give identical ids.
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
    opts, fixtures = parse_args(__doc__)
    text = Path(opts.corpus).read_text(encoding="utf-8")
    documents = [d for d in text.split(ENDOFTEXT) if d]
    mb = len(text.encode()) / 1e6
    ours = load_tokenizer(fixtures)
    tik, hf = build_peers(fixtures, ours)
    print(f"corpus {opts.corpus} ({mb:.1f} MB, {len(documents)} documents), GPT-2 vocabulary, "
          f"{os.cpu_count()} cores")

    rows = []
    tik_ids, t = timed(lambda: [tik.encode_ordinary(d) for d in documents])
    rows.append(("tiktoken, one thread", t))
    tik_batch, t = timed(lambda: tik.encode_ordinary_batch(documents))
    rows.append(("tiktoken, batch (all cores)", t))
    hf_one, t = timed(lambda: [hf.encode(d, add_special_tokens=False).ids for d in documents])
    rows.append(("HF tokenizers, one thread", t))
    hf_batch, t = timed(lambda: [e.ids for e in hf.encode_batch(documents,
                                                                add_special_tokens=False)])
    rows.append(("HF tokenizers, batch (all cores)", t))
    ours_one, t = timed(lambda: [ours.encode_ordinary(d) for d in documents])
    rows.append(("ours, one process (cold cache)", t))
    ours.__init__(ours.vocab, ours.merges, ours.special_ids, ours.pattern)  # a cold cache again
    ours_batch, t = timed(lambda: ours.encode_batch(documents, disallowed_special=()))
    rows.append(("ours, encode_batch (all cores)", t))

    base = mb / rows[0][1]
    print(f"{'encoder':<36}{'MB/s':>8}{'vs tiktoken 1 thread':>24}")
    for name, seconds in rows:
        print(f"{name:<36}{mb / seconds:>8.2f}{(mb / seconds) / base:>23.2f}x")
    same = tik_ids == tik_batch == hf_one == hf_batch == ours_one == ours_batch
    print("identical ids across all encoders:", "yes" if same else "NO")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
