"""tiktoken: a rank file plus a sidecar JSON with the pattern and the special tokens.

``<name>.tiktoken`` has one line per non-special token, ``base64(token bytes) rank``, where the
rank is our token id. ``<name>.json`` next to it holds what ``tiktoken.Encoding`` needs besides::

    {"name": "web-en-32k", "pat_str": "...", "pattern": "gpt2",
     "special_tokens": {"<|endoftext|>": 0}, "explicit_n_vocab": 32000}

so that ``tiktoken.Encoding(name=..., pat_str=..., mergeable_ranks=..., special_tokens=...)``
gives our ids. Pattern ``none`` has no regex; its ``pat_str`` matches any text as one pre-token.
``explicit_n_vocab`` is written only when the ids are ``0..n-1`` (tiktoken asserts it; a version
with holes in its ids loads without it).

A bare rank file (no sidecar), as tiktoken publishes its encodings, is read with the pattern and
special tokens of the published encoding it is (``PUBLISHED``, recognised by the file's sha256),
or with those given by the importer. A line whose token is empty (``= 50256``) reserves its id.

tiktoken keeps no merge list: it merges the adjacent pair whose concatenation has the lowest
rank. So an export needs every token's bytes to be unique (else ``ValueError`` naming the token),
and the merges recovered from the ranks on import must be ours (checked on export).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
from typing import NamedTuple

from ..checks import is_int
from ..pretokenize import NAMED_PATTERNS, pattern_name
from ..tokenizer import Tokenizer
from .common import field, parse_json, text_file, to_int
from .ranks import recover_merges

SUFFIX = ".tiktoken"
WHOLE_TEXT = r"[\s\S]+"  # pat_str for pattern "none": every segment is one pre-token


def dumps(tokenizer, name: str = "tokenizer") -> dict[str, bytes]:
    """``{"<name>.tiktoken": rank file, "<name>.json": sidecar}``."""
    if tokenizer.algorithm != Tokenizer.algorithm:
        raise ValueError(f"tiktoken holds byte-level BPE only, not {tokenizer.algorithm!r}")
    ranks = mergeable_ranks(tokenizer)
    check_merges(tokenizer, ranks)
    lines = [f"{base64.b64encode(token).decode()} {rank}\n" for token, rank in ranks.items()]
    sidecar = {"name": name, "pat_str": pat_str(tokenizer.pattern), "pattern": tokenizer.pattern,
               "special_tokens": dict(tokenizer.special_ids)}
    if max(tokenizer.vocab) + 1 == len(tokenizer.vocab):  # tiktoken checks it: ids 0..n-1 only
        sidecar["explicit_n_vocab"] = len(tokenizer.vocab)
    return {f"{name}{SUFFIX}": "".join(lines).encode(),
            f"{name}.json": (json.dumps(sidecar, ensure_ascii=False, indent=2) + "\n").encode()}


def pat_str(pattern: str) -> str:
    """The regex source tiktoken splits with: ``pat_str("none") -> r"[\\s\\S]+"``."""
    return NAMED_PATTERNS.get(pattern, pattern) or WHOLE_TEXT


def mergeable_ranks(tokenizer) -> dict[bytes, int]:
    """``{token bytes: id}`` for the non-special tokens, in id order; bytes must be unique."""
    specials = set(tokenizer.special_ids.values())
    ranks: dict[bytes, int] = {}
    for token_id in sorted(tokenizer.vocab):
        token = tokenizer.vocab[token_id]
        if token_id in specials:
            continue
        if token in ranks:
            raise ValueError(f"cannot export to tiktoken: token {token!r} is in the vocab twice "
                             f"(ids {ranks[token]} and {token_id}); tiktoken ranks tokens by "
                             f"their bytes")
        ranks[token] = token_id
    return ranks


def check_merges(tokenizer, ranks: dict[bytes, int]) -> None:
    """The merges tiktoken's ranks imply must be our merges, in our order."""
    recovered = recover_merges(ranks)
    for rank, (ours, theirs) in enumerate(zip(tokenizer.merges, recovered)):
        if ours != theirs:
            raise ValueError(f"cannot export to tiktoken: merge {rank} {ours!r} would be read "
                             f"back as {theirs!r}; tiktoken merges by the rank of the result")
    if len(recovered) != len(tokenizer.merges):
        raise ValueError(f"cannot export to tiktoken: the vocab implies {len(recovered)} merges, "
                         f"the tokenizer has {len(tokenizer.merges)}")


# -- reading ----------------------------------------------------------------------------------

def is_rank_file(data: bytes) -> bool:
    """Whether the first line looks like ``base64 rank``."""
    first = data[:data.find(b"\n")] if b"\n" in data else data
    parts = first.split(b" ")
    if len(parts) != 2 or not parts[1].strip().isdigit():
        return False
    try:
        base64.b64decode(parts[0], validate=True)
    except binascii.Error:
        return False
    return True


def is_sidecar(data: bytes) -> bool:
    """Whether ``data`` is a sidecar JSON (an object with ``pat_str``)."""
    try:
        doc = parse_json(data, "sidecar")
    except ValueError:
        return False
    return isinstance(doc, dict) and "pat_str" in doc


class Published(NamedTuple):
    """One of tiktoken's published encodings: its rank file's sha256, pattern, special tokens."""
    sha256: str
    pattern: str
    special_tokens: dict[str, int]


# The encodings tiktoken publishes as bare rank files (tiktoken_ext/openai_public.py holds the
# same constants; tests/bpe/test_formats_tiktoken.py checks these against them).
PUBLISHED = {
    "r50k_base": Published("306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
                           "gpt2", {"<|endoftext|>": 50256}),
    "p50k_base": Published("94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
                           "gpt2", {"<|endoftext|>": 50256}),
    "cl100k_base": Published("223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
                             "gpt4", {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258,
                                      "<|fim_middle|>": 100259, "<|fim_suffix|>": 100260,
                                      "<|endofprompt|>": 100276}),
    "o200k_base": Published("446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
                            "o200k", {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}),
}


def recognise(data: bytes) -> str | None:
    """The name of the published encoding whose rank file is ``data`` (by sha256), or None."""
    digest = hashlib.sha256(data).hexdigest()
    return next((name for name, known in PUBLISHED.items() if known.sha256 == digest), None)


def loads(files: dict[str, bytes], pattern: str | None = None,
          special_tokens: dict[str, int] | None = None):
    """A tokenizer from a rank file (``X.tiktoken``) and what it needs besides: its sidecar
    ``X.json``; else, for a bare rank file, the published encoding it is (recognised by its
    sha256), or the ``pattern`` and ``special_tokens`` given (``pattern`` may name a published
    encoding, ``cl100k_base``: its pattern and special tokens). The tokenizer's ``recognised_as``
    names the published encoding it was read as, if any."""
    rank_name, sidecar_name = _file_names(files)
    ranks, reserved = read_ranks(files[rank_name], rank_name)
    if sidecar_name is not None:
        if pattern is not None or special_tokens is not None:
            raise ValueError(f"{sidecar_name} names the pattern and special tokens of "
                             f"{rank_name}: give none with it")
        pattern, special_tokens = read_sidecar(files[sidecar_name], sidecar_name)
        recognised = None
    else:
        recognised, pattern, special_tokens = _bare(files[rank_name], rank_name, pattern,
                                                    special_tokens)
    tokenizer = _tokenizer(ranks, reserved, special_tokens, pattern, sidecar_name or "the "
                           "special tokens given")
    tokenizer.recognised_as = recognised
    return tokenizer


def _bare(data: bytes, name: str, pattern: str | None, special_tokens: dict[str, int] | None):
    """``(published name or None, pattern, special tokens)`` of a rank file without a sidecar."""
    recognised = recognise(data)
    if recognised is not None:
        known = PUBLISHED[recognised]
        if pattern not in (None, recognised) or special_tokens not in (None,
                                                                       known.special_tokens):
            raise ValueError(f"{name} is tiktoken's {recognised} (by its sha256), which has its "
                             f"own pattern and special tokens: give none with it")
        return recognised, PUBLISHED[recognised].pattern, PUBLISHED[recognised].special_tokens
    if pattern in PUBLISHED:
        preset = PUBLISHED[pattern]
        return None, preset.pattern, (preset.special_tokens if special_tokens is None
                                      else special_tokens)
    if pattern is None:
        raise ValueError(f"{name} is a bare rank file: it holds no pattern and no special "
                         f"tokens. Give its pattern (gpt2, gpt4, o200k, a regex, or a published "
                         f"encoding: {', '.join(PUBLISHED)}) and its special tokens as "
                         f'{{"<|endoftext|>": 50256}}, or its sidecar {_stem(name)}.json '
                         f"with pat_str and special_tokens")
    return None, pattern, special_tokens or {}


def read_sidecar(data: bytes, name: str) -> tuple[str, dict[str, int]]:
    """``(pattern, special tokens)`` from a sidecar JSON."""
    sidecar = parse_json(data, name)
    specials = field(sidecar, "special_tokens", dict, name)
    for token in specials:
        field(specials, token, int, f"{name}: special_tokens")
    pattern = field(sidecar, "pat_str", str, name)
    return ("none" if pattern == WHOLE_TEXT else pattern_name(pattern)), specials


def _tokenizer(ranks: dict[bytes, int], reserved: set[int], specials: dict[str, int],
               pattern: str, where: str):
    """Special tokens take their ids (a reserved id, of an empty-token line, may be one);
    every other id a rank holds is a token, and a reserved id no special token takes a hole."""
    vocab = {rank: token for token, rank in ranks.items()}
    for token, token_id in specials.items():
        if not isinstance(token, str) or not token or not is_int(token_id) or token_id < 0:
            raise ValueError(f"{where}: special token {token!r} needs a non-empty name and an "
                             f"id >= 0, got {token_id!r:.40}")
        if token_id in vocab:
            raise ValueError(f"{where}: special token {token!r} has id {token_id}, which "
                             f"is the rank of {vocab[token_id]!r}")
        vocab[token_id] = token.encode()
    if len(set(specials.values())) != len(specials):
        raise ValueError(f"{where}: two special tokens share an id")
    return Tokenizer(vocab, recover_merges(ranks), specials, pattern)


def _stem(name: str) -> str:
    return os.path.splitext(name)[0]


def _file_names(files: dict[str, bytes]) -> tuple[str, str | None]:
    """The rank file's name and its sidecar's (None when the rank file comes alone)."""
    rank_names = [n for n in files if n.endswith(SUFFIX)] or [
        n for n in files if not n.endswith(".json") and is_rank_file(files[n])]
    if len(rank_names) != 1:
        raise ValueError(f"expected one tiktoken rank file (*{SUFFIX}), found {len(rank_names)}")
    rank_name = rank_names[0]
    sidecars = [n for n in files if n == f"{_stem(rank_name)}.json"] or [
        n for n in files if n.endswith(".json")]
    if len(sidecars) > 1:
        raise ValueError(f"the tiktoken rank file {rank_name} comes with {len(sidecars)} JSON "
                         f"files; give only its sidecar {_stem(rank_name)}.json")
    return rank_name, (sidecars[0] if sidecars else None)


def read_ranks(data: bytes, name: str) -> tuple[dict[bytes, int], set[int]]:
    """``(ranks, reserved ids)``: ``b"YQ== 0\nYg== 1\n= 2\n" -> ({b"a": 0, b"b": 1}, {2})``.
    A line whose token is empty (``=``) is read as tiktoken's loader reads it: its rank names no
    token that encoding can give, so the id stays reserved. Tokens and ranks must be unique."""
    ranks: dict[bytes, int] = {}
    reserved: set[int] = set()
    for number, line in enumerate(text_file(data, name), 1):
        if not line:
            continue
        parts = line.split(" ")
        where = f"{name} line {number}"
        if len(parts) != 2:
            raise ValueError(f"{where}: expected 'base64-token rank', got {line!r:.80}")
        token, rank = _b64(parts[0], where), to_int(parts[1], where)
        if rank < 0 or rank in reserved:
            raise ValueError(f"{where}: rank {rank} is negative or listed twice")
        if not token:
            reserved.add(rank)
            continue
        if token in ranks:
            raise ValueError(f"{where}: token {token!r} is listed twice")
        ranks[token] = rank
    if len(set(ranks.values())) != len(ranks) or reserved & set(ranks.values()):
        raise ValueError(f"{name}: two tokens share a rank")
    return ranks, reserved


def _b64(text: str, where: str) -> bytes:
    if text.strip("=") == "" and len(text) <= 2:
        return b""  # the empty token, as tiktoken's loader decodes it
    try:
        return base64.b64decode(text, validate=True)
    except binascii.Error:
        raise ValueError(f"{where}: {text!r:.80} is not base64") from None
