"""tiktoken: a rank file plus a sidecar JSON with the pattern and the special tokens.

``<name>.tiktoken`` has one line per non-special token, ``base64(token bytes) rank``, where the
rank is our token id. ``<name>.json`` next to it holds what ``tiktoken.Encoding`` needs besides::

    {"name": "web-en-32k", "pat_str": "...", "pattern": "gpt2",
     "special_tokens": {"<|endoftext|>": 0}, "explicit_n_vocab": 32000}

so that ``tiktoken.Encoding(name=..., pat_str=..., mergeable_ranks=..., special_tokens=...)``
gives our ids. Pattern ``none`` has no regex; its ``pat_str`` matches any text as one pre-token.

tiktoken keeps no merge list: it merges the adjacent pair whose concatenation has the lowest
rank. So an export needs every token's bytes to be unique (else ``ValueError`` naming the token),
and the merges recovered from the ranks on import must be ours (checked on export).
"""

from __future__ import annotations

import base64
import binascii
import json
import os

from ..pretokenize import NAMED_PATTERNS, pattern_name
from ..tokenizer import Tokenizer
from .common import field, parse_json, text_file, to_int

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
               "special_tokens": dict(tokenizer.special_ids),
               "explicit_n_vocab": tokenizer.vocab_size}
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


def recover_merges(ranks: dict[bytes, int]) -> list[tuple[bytes, bytes]]:
    """The merge that makes each multi-byte token, in rank order.

    ``recover_merges({b"a": 0, b"b": 1, b"ab": 2}) -> [(b"a", b"b")]``
    """
    merges = []
    for token, rank in sorted(ranks.items(), key=lambda item: item[1]):
        if len(token) > 1:
            merges.append(_split_in_two(token, rank, ranks))
    return merges


def _split_in_two(token: bytes, limit: int, ranks: dict[bytes, int]) -> tuple[bytes, bytes]:
    """Merge the bytes of ``token`` with the ranks below ``limit``; two parts must remain."""
    parts = [token[i:i + 1] for i in range(len(token))]
    while len(parts) > 2:
        found = [(ranks.get(a + b, limit), i) for i, (a, b) in enumerate(zip(parts, parts[1:]))]
        best, i = min(found)
        if best >= limit:
            break
        parts[i:i + 2] = [parts[i] + parts[i + 1]]
    if len(parts) != 2:
        raise ValueError(f"token {token!r} (rank {limit}) is not made by merging two tokens of "
                         f"lower rank")
    return parts[0], parts[1]


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


def loads(files: dict[str, bytes]):
    """A tokenizer from a rank file and its sidecar JSON (file names ``X.tiktoken``, ``X.json``)."""
    rank_name, sidecar_name = _file_names(files)
    sidecar = parse_json(files[sidecar_name], sidecar_name)
    ranks = read_ranks(files[rank_name], rank_name)
    specials = field(sidecar, "special_tokens", dict, sidecar_name)
    for token in specials:
        field(specials, token, int, f"{sidecar_name}: special_tokens")
    pattern = field(sidecar, "pat_str", str, sidecar_name)
    pattern = "none" if pattern == WHOLE_TEXT else pattern_name(pattern)
    vocab = {rank: token for token, rank in ranks.items()}
    for token, token_id in specials.items():
        if token_id in vocab:
            raise ValueError(f"{sidecar_name}: special token {token!r} has id {token_id}, which "
                             f"is the rank of {vocab[token_id]!r}")
        vocab[token_id] = token.encode()
    return Tokenizer(vocab, recover_merges(ranks), specials, pattern)


def _file_names(files: dict[str, bytes]) -> tuple[str, str]:
    rank_names = [n for n in files if n.endswith(SUFFIX)] or [
        n for n in files if not n.endswith(".json") and is_rank_file(files[n])]
    if len(rank_names) != 1:
        raise ValueError(f"expected one tiktoken rank file (*{SUFFIX}), found {len(rank_names)}")
    rank_name = rank_names[0]
    stem = os.path.splitext(rank_name)[0]
    sidecars = [n for n in files if n == f"{stem}.json"] or [n for n in files
                                                             if n.endswith(".json")]
    if len(sidecars) != 1:
        raise ValueError(f"the tiktoken rank file {rank_name} needs its sidecar {stem}.json "
                         f"(pat_str and special tokens)")
    return rank_name, sidecars[0]


def read_ranks(data: bytes, name: str) -> dict[bytes, int]:
    """``b"YQ== 0\\nYg== 1\\n" -> {b"a": 0, b"b": 1}``; tokens and ranks must be unique."""
    ranks: dict[bytes, int] = {}
    for number, line in enumerate(text_file(data, name), 1):
        if not line:
            continue
        parts = line.split(" ")
        where = f"{name} line {number}"
        if len(parts) != 2:
            raise ValueError(f"{where}: expected 'base64-token rank', got {line!r:.80}")
        token, rank = _b64(parts[0], where), to_int(parts[1], where)
        if token in ranks or rank < 0:
            raise ValueError(f"{where}: token {token!r} is listed twice or its rank is negative")
        ranks[token] = rank
    if len(set(ranks.values())) != len(ranks):
        raise ValueError(f"{name}: two tokens share a rank")
    return ranks


def _b64(text: str, where: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except binascii.Error:
        raise ValueError(f"{where}: {text!r:.80} is not base64") from None
