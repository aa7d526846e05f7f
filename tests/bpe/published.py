"""tiktoken's published encodings, as the tests rebuild them without the network: the constants
come from tiktoken's own package (``tiktoken_ext/openai_public.py``), the rank files from a
vocabulary made here or from GPT-2's files (``tests.fixtures``)."""

import base64
import json
from functools import lru_cache

import tiktoken
import tiktoken.load
import tiktoken_ext.openai_public as openai_public

from tests.fixtures import gpt2_fixture_dir
from tokenizers_app.bpe.formats.tiktoken import mergeable_ranks


def published_constants(name: str) -> dict:
    """tiktoken's constructor of ``name`` run with a loader that reads nothing: its pattern,
    special tokens and the sha256 it expects of the rank file (``expected_hash``)."""
    seen = {}

    def no_download(url, expected_hash=None):
        seen["expected_hash"] = expected_hash
        return {}

    original = openai_public.load_tiktoken_bpe
    openai_public.load_tiktoken_bpe = no_download
    try:
        constants = getattr(openai_public, name)()
    finally:
        openai_public.load_tiktoken_bpe = original
    return {**constants, **seen}


def write_rank_file(ranks: dict[bytes, int]) -> bytes:
    """A rank file as tiktoken writes one: ``base64 rank`` lines, in rank order."""
    return b"".join(base64.b64encode(token) + b" " + str(rank).encode() + b"\n"
                    for token, rank in sorted(ranks.items(), key=lambda item: item[1]))


def rank_file(tokenizer) -> bytes:
    return write_rank_file(mergeable_ranks(tokenizer))


@lru_cache(maxsize=1)
def gpt2_rank_file() -> bytes:
    """GPT-2's vocabulary without <|endoftext|>, as a rank file: r50k_base.tiktoken."""
    vocab = json.loads((gpt2_fixture_dir() / "vocab.json").read_text(encoding="utf-8"))
    byte_of = _unicode_to_byte()
    return write_rank_file({bytes(byte_of[ch] for ch in token): rank
                            for token, rank in vocab.items() if token != "<|endoftext|>"})


def _unicode_to_byte() -> dict[str, int]:
    """GPT-2's printable stand-ins for bytes (vocab.json spells tokens with them)."""
    shown = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    chars = {b: chr(b) for b in shown}
    hidden = [b for b in range(256) if b not in chars]
    chars.update({b: chr(256 + i) for i, b in enumerate(hidden)})
    return {char: b for b, char in chars.items()}


def tiktoken_of(name: str, data: bytes, tmp_path) -> tiktoken.Encoding:
    """``tiktoken.Encoding`` of tiktoken's constants for ``name`` over the rank file ``data``,
    read by tiktoken's own loader."""
    path = tmp_path / f"{name}.tiktoken"
    path.write_bytes(data)
    constants = published_constants(name)
    return tiktoken.Encoding(name=name, pat_str=constants["pat_str"],
                             mergeable_ranks=tiktoken.load.load_tiktoken_bpe(str(path)),
                             special_tokens=constants["special_tokens"])
