"""Encoding: ours against tiktoken and Hugging Face `tokenizers`, GPT-2's vocabulary, one run.

    python bench/encode.py --corpus PATH [--fixtures ../shared/fixtures/gpt2] [--repeat 3]

All three are built from the same GPT-2 `vocab.json` + `merges.txt`. The script prints MB/s for
one thread (one process for ours) and for batch encoding on all cores, the ratios against
tiktoken's one-thread figure, and checks that all three give identical ids. Each encoder runs
``--repeat`` times, taking turns with the others, each time in a fresh process (so ours starts
with an empty cache, and no encoder runs beside another's threads or garbage); its best time
counts; the spread of ours / tiktoken over the rounds is printed too. Building the tokenizers and
reading the corpus are not timed. The header names the core ours runs (``compiled.CORE_PATH``; set
``BPE_PURE_PYTHON=1`` to time the pure-Python loops).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from array import array
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.gpt2_peers import build_tiktoken, parse_args, timed  # noqa: E402
from tokenizers_app.bpe import load_tokenizer  # noqa: E402
from tokenizers_app.bpe.compiled import CORE_PATH  # noqa: E402

ENDOFTEXT = "<|endoftext|>"


def build_peers(fixtures: Path, ours):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    tik = build_tiktoken(ours)
    hf = Tokenizer(models.BPE.from_file(str(fixtures / "vocab.json"),
                                        str(fixtures / "merges.txt")))
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    return tik, hf


ENCODERS = {
    "ours, one process (cold cache)":
        lambda docs, ours, tik, hf: [ours.encode_ordinary(d) for d in docs],
    "ours, encode_batch (all cores)":
        lambda docs, ours, tik, hf: ours.encode_batch(docs, disallowed_special=()),
    "tiktoken, one thread": lambda docs, ours, tik, hf: [tik.encode_ordinary(d) for d in docs],
    "tiktoken, batch (all cores)": lambda docs, ours, tik, hf: tik.encode_ordinary_batch(docs),
    "HF tokenizers, one thread":
        lambda docs, ours, tik, hf: [hf.encode(d, add_special_tokens=False).ids for d in docs],
    "HF tokenizers, batch (all cores)":
        lambda docs, ours, tik, hf: [e.ids for e in hf.encode_batch(docs,
                                                                    add_special_tokens=False)],
}


def run_one(opts, fixtures: Path) -> None:
    """In a fresh process: build everything, time one encoder once, print seconds and a digest
    of the ids."""
    documents = [d for d in Path(opts.corpus).read_text(encoding="utf-8").split(ENDOFTEXT) if d]
    ours = load_tokenizer(fixtures)
    tik, hf = build_peers(fixtures, ours)
    ours.pretokenizer.split("\u00e9")  # build the split pattern before the clock starts
    ids, seconds = timed(lambda: ENCODERS[opts.one](documents, ours, tik, hf))
    digest = hashlib.sha256()
    for doc_ids in ids:
        digest.update(array("i", doc_ids).tobytes() + b"|")
    print(json.dumps({"seconds": seconds, "digest": digest.hexdigest()}))


def main() -> None:
    opts, fixtures = parse_args(__doc__, repeat=True, one=list(ENCODERS))
    if opts.one:
        return run_one(opts, fixtures)
    mb = Path(opts.corpus).stat().st_size / 1e6
    documents = Path(opts.corpus).read_text(encoding="utf-8").count(ENDOFTEXT) + 1
    print(f"corpus {opts.corpus} ({mb:.1f} MB, about {documents} documents), GPT-2 vocabulary, "
          f"{os.cpu_count()} cores, best of {opts.repeat} runs, each in a fresh process")
    print(f"ours runs the core: {CORE_PATH}")
    best = {name: float("inf") for name in ENCODERS}
    rounds: dict[str, list[float]] = {name: [] for name in ENCODERS}
    digests = set()
    for _ in range(opts.repeat):  # the encoders take turns, so that drift hits all alike
        for name in ENCODERS:
            out = subprocess.run([sys.executable, __file__, "--corpus", opts.corpus,
                                  "--fixtures", str(fixtures), "--one", name],
                                 check=True, capture_output=True, text=True).stdout
            result = json.loads(out.strip().splitlines()[-1])
            best[name] = min(best[name], result["seconds"])
            rounds[name].append(result["seconds"])
            digests.add(result["digest"])

    base = mb / best["tiktoken, one thread"]
    print(f"{'encoder':<36}{'MB/s':>8}{'vs tiktoken 1 thread':>24}")
    for name in ENCODERS:
        print(f"{name:<36}{mb / best[name]:>8.2f}{(mb / best[name]) / base:>23.2f}x")
    for name in list(ENCODERS)[:2]:
        ratios = [t / o for o, t in zip(rounds[name], rounds["tiktoken, one thread"])]
        print(f"{name} / tiktoken one thread, per round: "
              f"{', '.join(f'{r:.2f}x' for r in ratios)} "
              f"(spread {min(ratios):.2f}x to {max(ratios):.2f}x)")
    same = len(digests) == 1
    print("identical ids across all encoders:", "yes" if same else "NO")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
