"""A tokenizer's canonical content, as the registry stores it: its digest and the kind of each
vocab entry. Same digest, same ids for every text."""

from __future__ import annotations

import hashlib
import struct

from .tokenizer import Tokenizer

VOCAB_KINDS = ("special", "byte", "merge", "added", "symbol")

DIGEST_PREFIX = b"tokenizer-registry/content/v1\n"


def content_digest(tokenizer: Tokenizer) -> str:
    """sha256 over a canonical serialization of everything that decides the ids.

    Hashed in order, each text or byte string as a 4-byte big-endian length then its bytes
    (a character-level token as its UTF-8), each number as 4 bytes: ``DIGEST_PREFIX``, the
    algorithm, the pattern (its name, or the regex source; for character-level BPE the split,
    then ``lowercase=0|1``, ``unk=`` and ``suffix=`` on lines of their own), the number of special tokens then each (id, UTF-8 text) in list order, the
    number of vocab entries then each (id, bytes) by id, the number of merges then each
    (left, right) by rank. Merge counts are not part of it: a tokenizer imported from a file
    without counts has the digest of the same tokenizer trained here.
    """
    h = hashlib.sha256(DIGEST_PREFIX)
    h.update(_field(tokenizer.algorithm.encode()) + _field(_pattern(tokenizer).encode()))
    h.update(_number(len(tokenizer.special_ids)))
    for token, token_id in tokenizer.special_ids.items():
        h.update(_number(token_id) + _field(token.encode()))
    h.update(_number(len(tokenizer.vocab)))
    for token_id in sorted(tokenizer.vocab):
        h.update(_number(token_id) + _field(tokenizer.vocab[token_id]))
    h.update(_number(len(tokenizer.merges)))
    for left, right in tokenizer.merges:
        h.update(_field(left) + _field(right))
    return h.hexdigest()


def _pattern(tokenizer) -> str:
    if tokenizer.algorithm == "char_bpe":
        return (f"{tokenizer.pattern}\nlowercase={int(tokenizer.lowercase)}\n"
                f"unk={tokenizer.unk_token}\nsuffix={tokenizer.suffix}")
    return tokenizer.pattern


def _number(n: int) -> bytes:
    return struct.pack(">I", n)


def _field(data: bytes) -> bytes:
    """``_field(b"ab") -> b"\\x00\\x00\\x00\\x02ab"``"""
    return struct.pack(">I", len(data)) + data


def vocab_kinds(tokenizer: Tokenizer):
    """``(token id, token bytes, kind)`` for every vocab entry, by id; the kinds are
    ``VOCAB_KINDS``: a special token, one of the 256 single bytes, the result of a merge,
    ``added`` (neither: an imported extra token), or ``symbol``: a character of a
    character-level alphabet (``"w"`` or ``"w</w>"``, stored as UTF-8)."""
    special_ids = set(tokenizer.special_ids.values())
    merged = {left + right for left, right in tokenizer.merges}
    special, byte, merge, added, symbol = VOCAB_KINDS
    suffix = getattr(tokenizer, "suffix", None)  # character-level BPE's
    for token_id, token in sorted(tokenizer.vocab.items()):
        if token_id in special_ids:
            yield token_id, token, special
        elif suffix is not None:
            kind = merge if token in merged else symbol if _characters(token, suffix) == 1 \
                else added
            yield token_id, token, kind
        elif len(token) == 1:
            yield token_id, token, byte
        else:
            yield token_id, token, merge if token in merged else added


def _characters(token: bytes, suffix: str) -> int:
    """The characters of a character-level token without its suffix: ``_characters("é</w>"
    .encode(), "</w>") -> 1``."""
    return len(token.decode().removesuffix(suffix))
