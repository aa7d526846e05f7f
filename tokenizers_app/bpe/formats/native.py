"""Our native JSON format: versioned, exact, with merge counts; round-trips byte for byte.

One JSON object with its keys in a fixed order and one vocab entry or merge per line::

    {
      "format": "tokenizer-registry",
      "version": 1,
      "algorithm": "byte_bpe",
      "pattern": "gpt2",
      "special_tokens": [
        {"token": "<|endoftext|>", "id": 0}
      ],
      "vocab": [
        [0, "<|endoftext|>"],
        [1, "Ā"],
        ...
        [257, "Ġt"]
      ],
      "merges": [
        ["Ġ", "t", 812]
      ]
    }

``pattern`` is a pattern name (``gpt2``, ``gpt4``, ``none``) or a custom regex. Byte-level tokens
are spelled in GPT-2's byte alphabet (see ``byte_level``), so every byte is exact and readable.
A merge is ``[left, right, count]``, in rank order; the count is ``null`` when unknown (imports).
Writing is canonical: ``dumps(loads(data)) == data`` for every file this module wrote.
"""

from __future__ import annotations

import json

from ..checks import is_int
from ..tokenizer import Tokenizer
from .byte_level import spell, unspell
from .char_level import native_fields, native_tokenizer
from .common import field, parse_json

FORMAT = "tokenizer-registry"
VERSION = 1
FILE_NAME = "tokenizer.json"


def dumps(tokenizer, name: str = "tokenizer") -> dict[str, bytes]:
    """``{"<name>.json": canonical JSON bytes}`` for a byte-level or a char-level tokenizer."""
    if tokenizer.algorithm == "char_bpe":
        header, spelling = native_fields(tokenizer)
    else:
        header, spelling = {"pattern": tokenizer.pattern}, spell
    header = {"format": FORMAT, "version": VERSION, "algorithm": tokenizer.algorithm, **header}
    specials = [{"token": t, "id": i} for t, i in tokenizer.special_ids.items()]
    vocab = [[i, spelling(tokenizer.vocab[i])] for i in sorted(tokenizer.vocab)]
    counts = tokenizer.merge_counts or [None] * len(tokenizer.merges)
    merges = [[spelling(a), spelling(b), n] for (a, b), n in zip(tokenizer.merges, counts)]
    return {f"{name}.json": _render(header, {"special_tokens": specials, "vocab": vocab,
                                             "merges": merges}).encode()}


def _render(header: dict, sections: dict[str, list]) -> str:
    """Fixed key order, fixed separators, one list item per line, a trailing newline."""
    lines = [f"  {_json(key)}: {_json(value)}," for key, value in header.items()]
    for key, items in sections.items():
        body = ",\n".join(f"    {_json(item)}" for item in items)
        lines.append(f"  {_json(key)}: [\n{body}\n  ]," if items else f"  {_json(key)}: [],")
    lines[-1] = lines[-1].rstrip(",")
    return "{\n" + "\n".join(lines) + "\n}\n"


def _json(value) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def is_native(data) -> bool:
    return isinstance(data, dict) and data.get("format") == FORMAT


def loads(data: bytes, name: str = FILE_NAME):
    """A tokenizer from native JSON bytes; ``ValueError`` naming the problem for a bad file."""
    doc = parse_json(data, name)
    if not is_native(doc):
        raise ValueError(f"{name} is not a tokenizer-registry file (no \"format\": \"{FORMAT}\")")
    version = field(doc, "version", int, name)
    if version != VERSION:
        raise ValueError(f"{name} has format version {version}; this code reads version {VERSION}")
    algorithm = field(doc, "algorithm", str, name)
    if algorithm == "char_bpe":
        return native_tokenizer(doc, name, read_vocab, read_merges, read_specials)
    if algorithm != Tokenizer.algorithm:
        raise ValueError(f"{name}: unknown algorithm {algorithm!r}")
    vocab = read_vocab(doc, name, unspell)
    merges, counts = read_merges(doc, name, unspell)
    return Tokenizer(vocab, merges, read_specials(doc, name), field(doc, "pattern", str, name),
                     merge_counts=counts)


def read_vocab(doc: dict, name: str, unspelling) -> dict:
    """``[[id, spelling], ...] -> {id: token}`` with ids unique. The entries' shapes are checked
    first, then the tokens are read in one ``map``: ``read_vocab({"vocab": [[0, "a"]]}, "t.json",
    unspell) -> {0: b"a"}``."""
    entries = field(doc, "vocab", list, name)
    bad = next((e for e in entries if not _is_vocab_entry(e)), None)
    if bad is not None:
        raise ValueError(f"{name}: a vocab entry must be [id, token], got {bad!r:.80}")
    ids = [entry[0] for entry in entries]
    vocab = dict(zip(ids, map(unspelling, [entry[1] for entry in entries])))
    if len(vocab) < len(ids):
        seen: set[int] = set()
        twice = next(i for i in ids if i in seen or seen.add(i))
        raise ValueError(f"{name}: token id {twice} is listed twice in the vocab")
    return vocab


def read_merges(doc: dict, name: str, unspelling) -> tuple[list, list[int] | None]:
    """``[[left, right, count or null], ...] -> (merges, counts or None)``, shapes checked first:
    ``read_merges({"merges": [["a", "b", 3]]}, "t.json", unspell) -> ([(b"a", b"b")], [3])``."""
    entries = field(doc, "merges", list, name)
    bad = next((e for e in entries if not _is_merge_entry(e)), None)
    if bad is not None:
        raise ValueError(f"{name}: a merge must be [left, right, count or null], "
                         f"got {bad!r:.80}")
    lefts = map(unspelling, [entry[0] for entry in entries])
    rights = map(unspelling, [entry[1] for entry in entries])
    merges = list(zip(lefts, rights))
    counts = [entry[2] for entry in entries]
    if None in counts and any(count is not None for count in counts):
        raise ValueError(f"{name}: merge counts must be all known or all null")
    return merges, (None if None in counts else counts)


def _is_vocab_entry(entry) -> bool:
    """``[id, spelling]``: ``_is_vocab_entry([3, "a"]) -> True``; ``[true, "a"]`` is not one."""
    return (type(entry) is list and len(entry) == 2 and _is_id(entry[0])
            and type(entry[1]) is str)


def _is_merge_entry(entry) -> bool:
    """``[left, right, count or null]``: ``_is_merge_entry(["a", "b", None]) -> True``."""
    return (type(entry) is list and len(entry) == 3 and type(entry[0]) is str
            and type(entry[1]) is str and (entry[2] is None or _is_id(entry[2])))


def read_specials(doc: dict, name: str) -> dict[str, int]:
    """``[{"token": t, "id": i}, ...] -> {t: i}`` in file order."""
    specials = {}
    for entry in field(doc, "special_tokens", list, name):
        token = field(entry, "token", str, f"{name}: special token {entry!r:.60}")
        token_id = field(entry, "id", int, f"{name}: special token {token!r}")
        if token in specials:
            raise ValueError(f"{name}: special token {token!r} is listed twice")
        specials[token] = token_id
    return specials


def _is_id(value) -> bool:
    return is_int(value) and value >= 0
