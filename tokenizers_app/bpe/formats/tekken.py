"""Mistral's ``tekken.json``: tiktoken's ranks, pattern and special slots in one JSON file.

::

    {"config": {"pattern": "...", "num_vocab_tokens": 150000, "default_vocab_size": 131072,
                "default_num_special_tokens": 1000, "version": "v3"},
     "vocab": [{"rank": 0, "token_bytes": "AA==", "token_str": "\\u0000"}, ...],
     "special_tokens": [{"rank": 0, "token_str": "<unk>", "is_control": true}, ...]}

``mistral-common`` (the library that reads it) numbers the special slots first, ``0..k-1``
(``k = default_num_special_tokens``), then the first ``default_vocab_size - k`` ranks as ids
``k + rank``. Slots the file names no token for are ``<SPECIAL_{id}>``; a file without
``special_tokens`` (versions up to v7) has the 20 of ``MISTRAL_SPECIAL_TOKENS`` first. Every slot
keeps its id here as a special token; the ranks are merged as tiktoken merges them.
"""

from __future__ import annotations

import base64
import binascii
import json

from ..tokenizer import Tokenizer
from .common import field, parse_json
from ..pretokenize import pattern_name
from .ranks import recover_merges
from .tiktoken import WHOLE_TEXT, check_merges, pat_str

FILE_NAME = "tekken.json"
FILLER = "<SPECIAL_{id}>"
MISTRAL_SPECIAL_TOKENS = (  # the slots of a file without "special_tokens", in id order
    "<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]", "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]",
    "[IMG_END]", "[PREFIX]", "[MIDDLE]", "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]")


def is_tekken(doc) -> bool:
    """Whether a parsed JSON document is a tekken file (a config with special slots, a vocab)."""
    return (isinstance(doc, dict) and isinstance(doc.get("config"), dict)
            and "default_num_special_tokens" in doc["config"] and isinstance(doc.get("vocab"),
                                                                             list))


def loads(data: bytes, name: str = FILE_NAME) -> Tokenizer:
    """A byte-level tokenizer with the ids mistral-common gives the file."""
    doc = parse_json(data, name)
    config = field(doc, "config", dict, name)
    slots = field(config, "default_num_special_tokens", int, f"{name}: config")
    size = field(config, "default_vocab_size", int, f"{name}: config")
    pattern = field(config, "pattern", str, f"{name}: config")
    pattern = "none" if pattern == WHOLE_TEXT else pattern_name(pattern)
    ranks = _ranks(field(doc, "vocab", list, name), size - slots, name)
    specials = _special_tokens(doc.get("special_tokens"), slots, name)
    vocab = {slots + rank: token for token, rank in ranks.items()}
    vocab.update({token_id: token.encode() for token, token_id in specials.items()})
    return Tokenizer(vocab, recover_merges(ranks), specials, pattern)


def _ranks(entries: list, count: int, name: str) -> dict[bytes, int]:
    """The first ``count`` ranks (mistral-common cuts the vocab there), bytes first."""
    if count < 256 or len(entries) < count:
        raise ValueError(f"{name}: default_vocab_size leaves {count} ranks, but the vocab holds "
                         f"{len(entries)} and byte-level BPE needs the 256 bytes")
    ranks: dict[bytes, int] = {}
    for i, entry in enumerate(entries[:count]):
        where = f"{name}: vocab entry {i}"
        if field(entry, "rank", int, where) != i:
            raise ValueError(f"{where} has rank {entry['rank']}; ranks must count up from 0")
        try:
            token = base64.b64decode(field(entry, "token_bytes", str, where), validate=True)
        except binascii.Error:
            raise ValueError(f"{where}: token_bytes is not base64") from None
        if (i < 256 and token != bytes([i])) or token in ranks or not token:
            raise ValueError(f"{where}: token {token!r} is empty, listed twice, or not byte {i}")
        ranks[token] = i
    return ranks


def _special_tokens(entries, slots: int, name: str) -> dict[str, int]:
    """Every special slot's name and id: those the file names, then ``<SPECIAL_{id}>``."""
    if entries is None:
        named = list(MISTRAL_SPECIAL_TOKENS[:slots])
    else:
        if not isinstance(entries, list):
            raise ValueError(f"{name}: 'special_tokens' must be a list")
        named = []
        for i, entry in enumerate(entries):
            where = f"{name}: special token {i}"
            if field(entry, "rank", int, where) != i:
                raise ValueError(f"{where} has rank {entry['rank']}; special tokens count up "
                                 f"from 0")
            named.append(field(entry, "token_str", str, where))
    if len(named) > slots or len(set(named)) != len(named):
        raise ValueError(f"{name}: {len(named)} special tokens (some twice?) for {slots} slots")
    return {token: i for i, token in enumerate(named + [FILLER.format(id=i)
                                                       for i in range(len(named), slots)])}


def dumps(tokenizer, name: str = "tekken") -> dict[str, bytes]:
    """``{"tekken.json": the file}`` (the name mistral-common looks for; ``name`` is not kept):
    special tokens must hold the first ids and the 256
    bytes the next, in byte order (as a version trained here or read from tekken has them)."""
    if tokenizer.algorithm != Tokenizer.algorithm:
        raise ValueError(f"tekken holds byte-level BPE only, not {tokenizer.algorithm!r}")
    slots = len(tokenizer.special_ids)
    if sorted(tokenizer.special_ids.values()) != list(range(slots)) or \
            sorted(tokenizer.vocab) != list(range(len(tokenizer.vocab))):
        raise ValueError("cannot write tekken: it numbers special tokens first, from 0, and "
                         "then every other token without a gap; this version's ids do not")
    ranks = {tokenizer.vocab[i]: i - slots for i in range(slots, len(tokenizer.vocab))}
    if any(ranks.get(bytes([b])) != b for b in range(256)):
        raise ValueError("cannot write tekken: the 256 bytes must follow the special tokens, in "
                         "byte order")
    check_merges(tokenizer, {token: slots + rank for token, rank in ranks.items()})
    doc = {"config": {"pattern": pat_str(tokenizer.pattern), "num_vocab_tokens": len(ranks),
                      "default_vocab_size": len(tokenizer.vocab),
                      "default_num_special_tokens": slots, "version": "v7"},
           "vocab": [{"rank": rank, "token_bytes": base64.b64encode(token).decode(),
                      "token_str": _text(token)} for token, rank in ranks.items()],
           "special_tokens": [{"rank": token_id, "token_str": token, "is_control": True}
                              for token, token_id in sorted(tokenizer.special_ids.items(),
                                                            key=lambda item: item[1])]}
    return {FILE_NAME: json.dumps(doc, ensure_ascii=False).encode()}


def _text(token: bytes) -> str | None:
    try:
        return token.decode("utf-8")
    except UnicodeDecodeError:
        return None
