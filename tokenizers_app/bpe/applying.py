"""Applying merges to a pre-token: the encoder's inner loop, in two shapes.

Both give the same ids: the pair of lowest rank present is merged (leftmost first on a tie)
until no pair has a rank.
- ``bpe``: a short pre-token, with a list of pair ranks scanned in C (``min``, ``index``);
- ``bpe_long``: a long pre-token, with a heap, so that ``"a" * 100_000`` is O(n log n).
(Merging many pre-tokens at once, rank by rank, was measured 2.5x slower than ``bpe`` one by
one on the distinct pre-tokens of English text, so there is no batch shape.)
"""

from __future__ import annotations

import heapq
import sys

NO_RANK = 1 << 62
SHIFT = 32
LONG_PIECE = 64  # pre-tokens longer than this (in bytes) are merged with a heap
_LITTLE = sys.byteorder == "little"


class MergeTable:
    """``ranks``: ``left id << 32 | right id -> rank``; ``merged[rank]``: the new id;
    ``byte_ids[b]``: the id of byte ``b``."""

    def __init__(self, ranks: dict[int, int], merged: list[int], byte_ids: list[int]):
        self.ranks, self.merged, self.byte_ids = ranks, merged, byte_ids
        self.pair_table = self._pair_table()

    def _pair_table(self) -> list[int]:
        """Rank of each pair of bytes, at index ``first | second << 8`` (the little-endian
        16-bit number of the two bytes)."""
        byte_of = {token_id: b for b, token_id in enumerate(self.byte_ids)}
        table = [NO_RANK] * 65536
        for pair, rank in self.ranks.items():  # only pairs of two single-byte tokens matter
            first, second = byte_of.get(pair >> SHIFT), byte_of.get(pair & 0xFFFFFFFF)
            if first is not None and second is not None:
                table[first | second << 8] = rank
        return table

    def byte_pair_ranks(self, data: bytes) -> list[int]:
        """Ranks of the pairs of adjacent bytes from the 65536-entry table; for long data on a
        little-endian machine the pairs at even and at odd offsets are read in C as 16-bit
        numbers."""
        size = len(data) - 1
        table = self.pair_table
        if size < 16 or not _LITTLE:
            return [table[data[i] | data[i + 1] << 8] for i in range(size)]
        rank_of = [0] * size
        rank_of[0::2] = map(table.__getitem__, memoryview(data[:size + 1 - (size + 1) % 2])
                            .cast("H"))
        rank_of[1::2] = map(table.__getitem__, memoryview(data[1:1 + size - size % 2]).cast("H"))
        return rank_of

    def bpe(self, data: bytes) -> list[int]:
        """The ids of one pre-token. ``rank_of[i]`` is the rank of the pair at ``ids[i]``."""
        ids = list(map(self.byte_ids.__getitem__, data))
        rank_of = self.byte_pair_ranks(data)
        if len(ids) > LONG_PIECE:
            return self.bpe_long(ids, rank_of)
        get, merged = self.ranks.get, self.merged
        while rank_of:
            rank = min(rank_of)
            if rank == NO_RANK:
                break
            i = rank_of.index(rank)
            ids[i:i + 2] = (merged[rank],)
            del rank_of[i]
            if i > 0:
                rank_of[i - 1] = get(ids[i - 1] << SHIFT | ids[i], NO_RANK)
            if i < len(rank_of):
                rank_of[i] = get(ids[i] << SHIFT | ids[i + 1], NO_RANK)
        return ids

    def bpe_long(self, ids: list[int], rank_of: list[int]) -> list[int]:
        """A heap of ``(rank, position)`` over linked symbols; stale entries are skipped."""
        get, merged = self.ranks.get, self.merged
        nxt = list(range(1, len(ids) + 1))
        nxt[-1] = -1
        prv = list(range(-1, len(ids) - 1))
        heap = [(rank, i) for i, rank in enumerate(rank_of) if rank != NO_RANK]
        heapq.heapify(heap)
        while heap:
            rank, i = heapq.heappop(heap)
            j = nxt[i]
            if j < 0 or get(ids[i] << SHIFT | ids[j]) != rank:
                continue  # stale
            ids[i], ids[j], nxt[i] = merged[rank], -1, nxt[j]
            if nxt[i] >= 0:
                prv[nxt[i]] = i
                _push(heap, get(ids[i] << SHIFT | ids[nxt[i]]), i)
            if prv[i] >= 0:
                _push(heap, get(ids[prv[i]] << SHIFT | ids[i]), prv[i])
        return [token for token in ids if token >= 0]


def _push(heap, rank: int | None, position: int) -> None:
    if rank is not None:
        heapq.heappush(heap, (rank, position))
