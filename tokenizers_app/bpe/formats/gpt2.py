"""GPT-2's ``vocab.json`` + ``merges.txt`` (a folder holding both files).

``vocab.json`` maps each token, spelled in GPT-2's byte alphabet, to its id; ``merges.txt`` has
one merge per line, ``left right`` in rank order, after a ``#version: 0.2`` header (written
always, read with or without it). The files hold no pattern and no list of special tokens, so on
import the pattern is ``gpt2`` and the special tokens are the vocab entries that are neither
single bytes nor made by a merge (``<|endoftext|>`` in GPT-2), in id order. A tokenizer with
another pattern can be written, but the files cannot say so: a reader assumes GPT-2's regex unless
told the pattern (``loads(files, pattern="gpt4")``).

A char-level tokenizer (``end_of_word_suffix`` ``</w>``, subword-nmt style) is written to the same
two files; a folder whose vocab lacks the byte alphabet but has ``</w>`` tokens is read as one.
"""

from __future__ import annotations

import json

from ..tokenizer import Tokenizer
from .byte_level import BYTE_TO_CHAR, spell, unspell
from .char_level import gpt2_files, gpt2_tokenizer
from .common import field, parse_json, text_file

VOCAB, MERGES = "vocab.json", "merges.txt"
ASSUMED_PATTERN = "gpt2"  # the files hold no pattern: GPT-2's, unless the reader is told another
HEADER = "#version: 0.2"


def dumps(tokenizer, name: str = "tokenizer") -> dict[str, bytes]:
    """``{"vocab.json": ..., "merges.txt": ...}`` (the name is not used: the file names are
    fixed)."""
    if tokenizer.algorithm == "char_bpe":
        vocab, merges = gpt2_files(tokenizer)
    else:
        vocab = {spell(tokenizer.vocab[i]): i for i in sorted(tokenizer.vocab)}
        if len(vocab) != len(tokenizer.vocab):
            raise ValueError("cannot export to vocab.json: the vocab holds the same bytes twice")
        merges = [(spell(a), spell(b)) for a, b in tokenizer.merges]
    lines = [HEADER] + [f"{a} {b}" for a, b in merges]
    return {VOCAB: (json.dumps(vocab, ensure_ascii=False, indent=2) + "\n").encode(),
            MERGES: ("\n".join(lines) + "\n").encode()}


def loads(files: dict[str, bytes], pattern: str | None = None):
    """A tokenizer from the bytes of ``vocab.json`` and ``merges.txt``, splitting text with
    ``pattern`` (the files hold none; ``gpt2`` when not given)."""
    missing = [n for n in (VOCAB, MERGES) if n not in files]
    if missing:
        raise ValueError(f"a GPT-2 tokenizer needs {VOCAB} and {MERGES}; {missing[0]} is missing")
    spellings = read_vocab(files[VOCAB])
    merges = read_merges(files[MERGES])
    if _is_char_level(spellings):
        if pattern is not None:
            raise ValueError("these vocab.json + merges.txt hold character-level BPE (tokens "
                             "with '</w>'), which splits words at whitespace: it takes no "
                             "pattern")
        return gpt2_tokenizer(spellings, merges)
    vocab = {token_id: unspell(spelling) for spelling, token_id in spellings.items()}
    merges = [(unspell(a), unspell(b)) for a, b in merges]
    return Tokenizer(vocab, merges, _find_specials(vocab, merges), pattern or ASSUMED_PATTERN)


def read_vocab(data: bytes) -> dict[str, int]:
    """``{spelling: id}`` with ids that are distinct integers >= 0."""
    vocab = parse_json(data, VOCAB)
    if not isinstance(vocab, dict):
        raise ValueError(f"{VOCAB} must be a JSON object of token -> id")
    seen = set()
    for spelling in vocab:
        token_id = field(vocab, spelling, int, VOCAB)
        if token_id < 0 or token_id in seen:
            raise ValueError(f"{VOCAB}: id {token_id} of {spelling!r} is negative or used twice")
        seen.add(token_id)
    return vocab


def read_merges(data: bytes) -> list[tuple[str, str]]:
    """``merges.txt`` lines -> ``[(left, right)]``; a first line ``#version...`` is skipped."""
    lines = text_file(data, MERGES)
    start = 1 if lines and lines[0].startswith("#version") else 0
    merges = []
    for number, line in enumerate(lines[start:], start + 1):
        if not line:
            continue
        parts = line.split(" ")
        if len(parts) != 2 or not all(parts):
            raise ValueError(f"{MERGES} line {number}: expected 'left right', got {line!r:.80}")
        merges.append((parts[0], parts[1]))
    return merges


def _find_specials(vocab: dict[int, bytes], merges: list[tuple[bytes, bytes]]) -> dict[str, int]:
    """The vocab entries that are neither single bytes nor made by a merge, in id order."""
    made = {a + b for a, b in merges}
    specials = {}
    for token_id in sorted(vocab):
        token = vocab[token_id]
        if len(token) != 1 and token not in made:
            if not _is_utf8(token):
                raise ValueError(f"{VOCAB}: token {token!r} (id {token_id}) is neither a byte "
                                 f"nor made by a merge, and not text, so not a special token")
            specials[token.decode()] = token_id
    return specials


def _is_utf8(token: bytes) -> bool:
    try:
        token.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _is_char_level(spellings: dict[str, int]) -> bool:
    if all(char in spellings for char in BYTE_TO_CHAR):
        return False
    return any(spelling.endswith("</w>") for spelling in spellings)
