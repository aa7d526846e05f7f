"""What a vocabulary always answers the same, computed once per loaded tokenizer: each id's text
for display (``display.token_text``), that text as a JSON string, and its length in bytes; from
the lengths, the byte span of each token of an encoding.

A request that shows 6,400 tokens then looks each one up in C (``map`` over a list indexed by
id) instead of rebuilding its text and adding its length in Python, and its JSON answer is
joined from those pieces (``encoding_json``: faster than validating and dumping the same lists;
bench/HISTORY.md), in one pass of C where the core is compiled (``token_table_compiled.pyx``) and
the table is dense, else in Python (``joined_json``). The plain version, one ``token_text`` and
one ``len`` per token and ``json.dumps``, is the oracle of ``tests/bpe/test_token_table.py``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from functools import cached_property
from itertools import accumulate, islice

import orjson

from .compiled import encoding_json as compiled_encoding_json
from .display import token_text

ById = list | dict  # a list indexed by id when the ids are dense, else a dict by id


def by_id(items: dict[int, object], value: Callable) -> ById:
    """``value`` of every item, looked up by id: ``by_id({0: b"ab", 1: b"c"}, len) -> [2, 1]``.

    A list when the ids leave few gaps (each id its index, a gap ``None``); a dict when they are
    sparse (an imported vocab may use ids up to ``2**31 - 1``)."""
    if not items or max(items) >= 2 * len(items):
        return {item_id: value(item) for item_id, item in items.items()}
    table: list = [None] * (max(items) + 1)
    for item_id, item in items.items():
        table[item_id] = value(item)
    return table


def byte_spans(ids: Sequence[int], lengths: ById) -> list[tuple[int, int]]:
    """Start and end byte of each token, by cumulative sums of their lengths:
    ``byte_spans([7, 5, 7], {5: 3, 7: 1}) -> [(0, 1), (1, 4), (4, 5)]``."""
    offsets = list(accumulate(map(lengths.__getitem__, ids), initial=0))
    return list(zip(offsets, islice(offsets, 1, None)))


class TokenTable:
    """A vocabulary's display texts, their JSON and the tokens' byte lengths by id, each built
    on first use.

    ``TokenTable({0: b" hi", 1: b"\\xff"}).texts_of([1, 0]) -> ["<0xFF>", "·hi"]``;
    ``.spans_of([1, 0]) -> [(0, 1), (1, 4)]``. The ids given are those of an encoding, all in
    the vocab: the lookups do not check them."""

    def __init__(self, vocab: dict[int, bytes]):
        self._vocab = vocab

    @cached_property
    def texts(self) -> ById:
        return by_id(self._vocab, token_text)

    @cached_property
    def json_texts(self) -> ById:
        """Each display text as ``json.dumps`` writes it (quoted, non-ASCII escaped); built
        apart from ``texts``, so that a process serving only the API keeps one of the two."""
        return by_id(self._vocab, lambda token: json.dumps(token_text(token)))

    @cached_property
    def lengths(self) -> ById:
        return by_id(self._vocab, len)

    def texts_of(self, ids: Sequence[int]) -> list[str]:
        """The display text of each id (``display.token_text`` of its bytes)."""
        return list(map(self.texts.__getitem__, ids))

    def spans_of(self, ids: Sequence[int]) -> list[tuple[int, int]]:
        """The byte span of each token of ``ids`` in the text they encode."""
        return byte_spans(ids, self.lengths)

    def encoding_json(self, ids: list[int], spans: list[tuple[int, int]] | None = None) -> str:
        """``{"ids": ids, "tokens": texts_of(ids), "spans": spans_of(ids)}`` exactly as
        ``json.dumps`` writes it: the one writer of the API encode's answer (``EncodeOut``),
        for every kind (the kinds' ``encoding_json`` give it their ids and spans). It is
        joined from each token's JSON text and the offsets' digits:
        ``TokenTable({0: b"a", 1: b" b"}).encoding_json([0, 1])`` ->
        ``{"ids": [0, 1], "tokens": ["a", "\\u00b7b"], "spans": [[0, 1], [1, 3]]}``. ``spans``,
        when given, are used as they are (an engine's, whose tokens are pieces, not bytes).
        Written in C when the core is compiled and the table dense, else by ``joined_json``."""
        if (spans is None and compiled_encoding_json is not None and type(ids) is list
                and type(self.json_texts) is list):
            return compiled_encoding_json(ids, self.json_texts, self.lengths)
        return self.joined_json(ids, spans)

    def joined_json(self, ids: Sequence[int], spans: list[tuple[int, int]] | None = None) -> str:
        """``encoding_json`` in Python: the tokens' JSON texts joined, the ids and spans dumped
        by ``orjson``."""
        tokens = ", ".join(map(self.json_texts.__getitem__, ids))
        spans = self._spans_json(ids) if spans is None else json.dumps(spans)
        return f'{{"ids": {ints_json(ids)}, "tokens": [{tokens}], "spans": {spans}}}'

    def _spans_json(self, ids: Sequence[int]) -> str:
        """``json.dumps(self.spans_of(ids))``, written in C (bench/HISTORY.md): the offsets laid
        out flat as ``start, end, -1, start, end, -1, ...`` (a list filled by slices, no pair
        built), dumped by ``orjson``, and each ``,-1,`` (no offset is negative) made the
        ``], [`` between two spans."""
        if not ids:
            return "[]"
        offsets = list(accumulate(map(self.lengths.__getitem__, ids), initial=0))
        flat = [-1] * (3 * len(offsets) - 4)
        flat[0::3] = offsets[:-1]
        flat[1::3] = offsets[1:]
        pairs = orjson.dumps(flat).replace(b",-1,", b"],[").replace(b",", b", ")
        return f"[{pairs.decode()}]"


def ints_json(values: list) -> str:
    """``json.dumps(values)`` of a list of ints, or of pairs of ints, written by ``orjson``
    (bench/HISTORY.md) with ``json.dumps``' separator put back: a comma can only be a
    separator there. ``ints_json([(0, 1), (1, 3)]) -> "[[0, 1], [1, 3]]"``."""
    return orjson.dumps(values).replace(b",", b", ").decode()


class BytesVocab:
    """What a ``vocab`` of ``{id: bytes}`` answers, for the byte-level ``Tokenizer`` and the
    library engines alike: its size, its ``TokenTable`` (built on first use and kept with the
    tokenizer, so with the process's cached tokenizer of a version) and a token's bytes."""

    vocab: dict[int, bytes]

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    @cached_property
    def token_table(self) -> TokenTable:
        return TokenTable(self.vocab)

    def token_bytes(self, token_id: int) -> bytes:
        try:
            return self.vocab[token_id]
        except KeyError:
            raise ValueError(f"token id {token_id!r} is not in the vocab") from None
