"""Encoding's inner loop: applying merges to a pre-token, in two shapes. (Training learns the
merges in ``training_loop``.)

Both give the same ids: the pair of lowest rank present is merged (leftmost first on a tie)
until no pair has a rank.
- ``bpe_many``: short pre-tokens, each with a list of pair ranks scanned in C (``min``,
  ``index``);
- ``bpe_long``: a long pre-token, with a heap, so that ``"a" * 100_000`` is O(n log n).
(Merging many pre-tokens at once, rank by rank, was slower than one by one on the distinct
pre-tokens of English text, and so was running the first few hundred ranks as ``str.replace``
over all of them joined; so ``bpe_many`` goes one pre-token at a time. Looking up a pre-token
that is itself a token, once its merge tree shows BPE gives it back whole, as tiktoken does,
saved less than the check cost on a cold cache. The measurements: bench/HISTORY.md.)

Plain twin: ``reference_bpe`` in tests/bpe/reference.py; tests/bpe/test_encoding_loop.py checks
both shapes against it. ``missing_keys`` is the cache rule the encoders share.
"""

from __future__ import annotations

import heapq
from array import array
from collections.abc import Iterable
from itertools import chain

from .pairs import LOW, SHIFT

NO_RANK = 1 << 62
# Pre-tokens over this many bytes are merged with a heap (``bpe_long``), shorter ones by scanning
# (``bpe_many``). The one threshold of both twins: encoding_loop_compiled.pyx reads it from here.
LONG_PRETOKEN = 64


class MergeTable:
    """``ranks``: ``left id << SHIFT | right id -> rank`` (``pairs``); ``merged[rank]``: the new id;
    ``byte_ids[b]``: the id of byte ``b``.

    The loops read ranks from ``after[left id][right id]``: a dict per left id, indexed by id
    (a list when the ids are dense, else a dict), which costs no new int per lookup, unlike
    ``ranks``. When the single-byte tokens have ids below 256, ``bytes.translate`` maps a
    pre-token's bytes to their ids in C.
    """

    def __init__(self, ranks: dict[int, int], merged: list[int], byte_ids: list[int]):
        self.ranks, self.merged, self.byte_ids = ranks, merged, byte_ids
        table = self._pair_table()
        self.rows = [table[first::256] for first in range(256)]
        self.after = self._after()
        self.translation = bytes(byte_ids) if max(byte_ids) < 256 else None

    def _pair_table(self) -> list[int]:
        """Rank of each pair of bytes, at index ``first | second << 8``."""
        byte_of = {token_id: b for b, token_id in enumerate(self.byte_ids)}
        table = [NO_RANK] * 65536
        for pair, rank in self.ranks.items():  # only pairs of two single-byte tokens matter
            first, second = byte_of.get(pair >> SHIFT), byte_of.get(pair & LOW)
            if first is not None and second is not None:
                table[first | second << 8] = rank
        return table

    def _after(self):
        """``after[left][right] -> rank`` for every id that can appear in a pre-token."""
        by_left: dict[int, dict[int, int]] = {}
        for pair, rank in self.ranks.items():
            by_left.setdefault(pair >> SHIFT, {})[pair & LOW] = rank
        ids = set(self.byte_ids).union(self.merged)
        if max(ids) < 4 * len(ids) + 1024:
            return [by_left.get(token_id, {}) for token_id in range(max(ids) + 1)]
        return {token_id: by_left.get(token_id, {}) for token_id in ids}

    def bpe_many(self, pretokens: Iterable[bytes]) -> list[tuple[int, ...]]:
        """The ids of each pre-token, as tuples. One loop over all of them, with the tables
        bound to locals, costs less than a call per pre-token (bench/HISTORY.md).
        ``rank_of[i]`` is the rank of the pair at ``ids[i]``."""
        byte_id, translation, long = self.byte_ids.__getitem__, self.translation, self.bpe_long
        row, cell, after, merged = self.rows.__getitem__, list.__getitem__, self.after, self.merged
        out = []
        for data in pretokens:
            ids = list(data.translate(translation)) if translation else list(map(byte_id, data))
            if len(ids) < 2:
                out.append(tuple(ids))
                continue
            rank_of = list(map(cell, map(row, data), data[1:]))
            if len(ids) > LONG_PRETOKEN:
                out.append(tuple(long(ids, rank_of)))
                continue
            while True:
                rank = min(rank_of)
                if rank == NO_RANK:
                    break
                i = rank_of.index(rank)
                new = ids[i] = merged[rank]
                del ids[i + 1], rank_of[i]
                if i:
                    rank_of[i - 1] = after[ids[i - 1]].get(new, NO_RANK)
                if i < len(rank_of):
                    rank_of[i] = after[new].get(ids[i + 1], NO_RANK)
                elif not i:
                    break  # one token is left
            out.append(tuple(ids))
        return out

    def bpe_flat(self, pretokens: Iterable[bytes]) -> tuple[array, array]:
        """``bpe_many``'s ids laid end to end, and how many ids each pre-token has, as two
        ``array("i")`` (what an extension's merge loop takes, with no tuple per pre-token):
        with ``b"ab"`` a token of id 7, ``bpe_flat([b"ab", b"c"]) -> (array("i", [7, 99]),
        array("i", [1, 1]))``."""
        merged = self.bpe_many(pretokens)
        return array("i", chain.from_iterable(merged)), array("i", map(len, merged))

    def bpe_long(self, ids: list[int], rank_of: list[int]) -> list[int]:
        """A heap of ``(rank, position)`` over linked symbols; stale entries are skipped."""
        after, merged = self.after, self.merged
        nxt = list(range(1, len(ids) + 1))
        nxt[-1] = -1
        prv = list(range(-1, len(ids) - 1))
        heap = [(rank, i) for i, rank in enumerate(rank_of) if rank != NO_RANK]
        heapq.heapify(heap)
        while heap:
            rank, i = heapq.heappop(heap)
            j = nxt[i]
            if j < 0 or ids[i] < 0 or after[ids[i]].get(ids[j]) != rank:
                continue  # stale: a symbol merged away, or a pair that changed
            ids[i], ids[j], nxt[i] = merged[rank], -1, nxt[j]
            if nxt[i] >= 0:
                prv[nxt[i]] = i
                _push(heap, after[ids[i]].get(ids[nxt[i]]), i)
            if prv[i] >= 0:
                _push(heap, after[ids[prv[i]]].get(ids[i]), prv[i])
        return [token for token in ids if token >= 0]


def _push(heap, rank: int | None, position: int) -> None:
    if rank is not None:
        heapq.heappush(heap, (rank, position))


def missing_keys(cache: dict, keys: set, size: int) -> set:
    """The cache rule of every encoder: the keys not in ``cache``; when they would not fit in
    ``size`` entries, the cache is emptied first and every key is missing.
    ``missing_keys({"a": 1}, {"a", "b"}, size=1) -> {"a", "b"}`` (and the cache is empty)."""
    missing = keys.difference(cache)
    if len(cache) + len(missing) > size:
        cache.clear()
        return set(keys)
    return missing


def merge_word(word: list[int], pair: tuple[int, int], new: int) -> list[int]:
    """``merge_word([1, 2, 3, 1, 2], (1, 2), 9) -> [9, 3, 9]``, left to right, no overlaps."""
    out, i, n = [], 0, len(word)
    a, b = pair
    while i < n:
        if i + 1 < n and word[i] == a and word[i + 1] == b:
            out.append(new)
            i += 2
        else:
            out.append(word[i])
            i += 1
    return out

