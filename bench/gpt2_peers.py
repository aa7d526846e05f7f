"""What the GPT-2 benchmarks share: the fixture folder, tiktoken built from our vocab, a timer."""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def parse_args(doc: str, repeat: bool = False, one: list[str] | None = None,
               ) -> tuple[argparse.Namespace, Path]:
    """``--corpus PATH [--fixtures DIR] [--repeat N] [--one NAME]``: the options and the folder
    of GPT-2's two files."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--corpus", required=True)
    if repeat:
        parser.add_argument("--repeat", type=int, default=3, help="runs of each encoder")
    if one:
        parser.add_argument("--one", choices=one, help="run only this one, once (internal)")
    parser.add_argument("--fixtures", default=os.environ.get(
        "TOKENIZER_FIXTURES", str(REPO.parent / "shared" / "fixtures" / "gpt2")),
        help="folder with GPT-2's vocab.json and merges.txt")
    opts = parser.parse_args()
    folder = Path(opts.fixtures)
    return opts, folder / "gpt2" if (folder / "gpt2").is_dir() else folder


def build_tiktoken(ours):
    """tiktoken's ``Encoding`` over the same vocabulary as our loaded GPT-2 tokenizer."""
    import tiktoken

    from tokenizers_app.bpe.pretokenize import GPT2_PATTERN

    ranks = {token: i for i, token in ours.vocab.items() if i not in ours.special_ids.values()}
    return tiktoken.Encoding("gpt2-fixture", pat_str=GPT2_PATTERN, mergeable_ranks=ranks,
                             special_tokens=dict(ours.special_ids))


def timed(fn):
    """``(fn(), seconds)``."""
    start = time.perf_counter()
    result = fn()
    return result, time.perf_counter() - start
