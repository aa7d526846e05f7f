"""Tokenizer: encode / encode_ordinary / decode / token_spans / encode_iterable.

Within each pre-token the merge of lowest rank present is applied until none applies, which gives
the ids of GPT-2, tiktoken and Hugging Face ``tokenizers`` for the same vocab and merges.
"""

from __future__ import annotations

import heapq
import multiprocessing
import sys
from collections.abc import Iterable, Iterator
from itertools import chain

from .counting import default_workers
from .pretokenize import (
    PreTokenizer,
    check_special_tokens,
    iter_chunks,
    special_regex,
    split_special,
)

LONG_PIECE = 64  # pre-tokens longer than this (in bytes) are merged with a heap
BATCH_MIN_CHARS = 1 << 20  # smaller batches are encoded in-process
CACHE_SIZE = 1 << 18  # pre-tokens kept with their ids; the cache is emptied when full
_NO_RANK = 1 << 62
_SHIFT = 32
_LITTLE = sys.byteorder == "little"


class Tokenizer:
    """A byte-level BPE tokenizer.

    ``vocab: dict[int, bytes]`` holds every token, special tokens included (as their UTF-8
    bytes); ``merges: list[tuple[bytes, bytes]]`` in rank order; ``special_tokens`` is a list of
    strings whose ids are found in ``vocab``, or a ``dict[str, int]``.
    """

    algorithm = "byte_bpe"

    def __init__(self, vocab: dict[int, bytes], merges: list[tuple[bytes, bytes]],
                 special_tokens=(), pattern: str = "gpt2", merge_counts: list[int] | None = None):
        self.vocab = dict(vocab)
        self.merges = [(bytes(a), bytes(b)) for a, b in merges]
        self.merge_counts = list(merge_counts) if merge_counts is not None else None
        self.pretokenizer = PreTokenizer(pattern)
        self.pattern = self.pretokenizer.pattern
        self.special_ids = self._special_ids(special_tokens)
        self.special_tokens = list(self.special_ids)
        self._byte_ids = self._find_byte_ids()
        self._ranks, self._merged = self._rank_table()
        self._pair_table = self._build_pair_table()
        self._special_re = special_regex(self.special_tokens)
        self._cache: dict[str, tuple[int, ...]] = {}

    # -- construction -------------------------------------------------------------------------

    def _special_ids(self, special_tokens) -> dict[str, int]:
        if isinstance(special_tokens, dict):
            check_special_tokens(special_tokens)
            for token, token_id in special_tokens.items():
                if self.vocab.get(token_id) != token.encode():
                    raise ValueError(f"special token {token!r} is not id {token_id} in the vocab")
            return dict(special_tokens)
        tokens = check_special_tokens(special_tokens)
        by_bytes = {}
        for token_id in sorted(self.vocab, reverse=True):  # lowest id wins on duplicates
            by_bytes[self.vocab[token_id]] = token_id
        missing = [t for t in tokens if t.encode() not in by_bytes]
        if missing:
            raise ValueError(f"special token {missing[0]!r} is not in the vocab")
        return {t: by_bytes[t.encode()] for t in tokens}

    def _find_byte_ids(self) -> list[int]:
        specials = set(self.special_ids.values())
        ids: dict[bytes, int] = {}
        for token_id, token in sorted(self.vocab.items(), reverse=True):
            if len(token) == 1 and token_id not in specials:
                ids[token] = token_id
        missing = [b for b in range(256) if bytes([b]) not in ids]
        if missing:
            raise ValueError(f"the vocab has no token for byte 0x{missing[0]:02x}; byte-level "
                             f"BPE needs all 256 single bytes")
        return [ids[bytes([b])] for b in range(256)]

    def _rank_table(self):
        """``left id << 32 | right id -> rank`` and ``rank -> merged id``."""
        specials = set(self.special_ids.values())
        ids = {}
        for token_id, token in sorted(self.vocab.items(), reverse=True):
            if token_id not in specials:
                ids[token] = token_id
        ranks, merged = {}, []
        for rank, (left, right) in enumerate(self.merges):
            for part in (left, right, left + right):
                if part not in ids:
                    raise ValueError(f"merge {rank} ({left!r}, {right!r}): token {part!r} is "
                                     f"not in the vocab")
            ranks.setdefault(ids[left] << _SHIFT | ids[right], rank)
            merged.append(ids[left + right])
        return ranks, merged

    # -- properties ---------------------------------------------------------------------------

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def token_bytes(self, token_id: int) -> bytes:
        try:
            return self.vocab[token_id]
        except KeyError:
            raise ValueError(f"token id {token_id!r} is not in the vocab") from None

    # -- encoding -----------------------------------------------------------------------------

    def encode_ordinary(self, text: str) -> list[int]:
        """Encode text, treating special-token text as plain text.

        The fast path: pre-tokens found in the cache are looked up in C (``map(cache.get)``);
        only the misses run BPE in Python."""
        pieces = self.pretokenizer.split(text)
        found = list(map(self._cache.get, pieces))
        if None in found:
            self._fill_misses(pieces, found)
        return list(chain.from_iterable(found))

    def _fill_misses(self, pieces: list[str], found: list) -> None:
        cache, index = self._cache, found.index(None)
        while True:
            ids = cache.get(pieces[index])
            if ids is None:
                ids = tuple(self.bpe(pieces[index].encode()))
                if len(cache) >= CACHE_SIZE:
                    cache.clear()
                cache[pieces[index]] = ids
            found[index] = ids
            try:
                index = found.index(None, index + 1)
            except ValueError:
                return

    def encode(self, text: str, allowed_special=frozenset(), disallowed_special="all") -> list[int]:
        """Encode text; special tokens in ``allowed_special`` (a set, or ``"all"``) become their
        ids. Text of any special token that is disallowed (default: all not allowed) raises
        ``ValueError``, as tiktoken does."""
        allowed = self._allowed(allowed_special, disallowed_special, text)
        ids: list[int] = []
        for piece, is_special in split_special(text, special_regex(allowed)):
            if is_special:
                ids.append(self.special_ids[piece])
            else:
                ids.extend(self.encode_ordinary(piece))
        return ids

    def _allowed_list(self, allowed_special) -> list[str]:
        if allowed_special == "all":
            return list(self.special_tokens)
        return [t for t in self.special_tokens if t in set(allowed_special)]

    def _allowed(self, allowed_special, disallowed_special, text: str) -> list[str]:
        allowed = self._allowed_list(allowed_special)
        if disallowed_special == "all":
            disallowed = [t for t in self.special_tokens if t not in allowed]
        else:
            disallowed = list(disallowed_special)
        found = special_regex(disallowed).search(text) if disallowed else None
        if found:
            raise ValueError(
                f"text holds the special token {found.group()!r}, which is not allowed; pass "
                f"allowed_special={{{found.group()!r}}} to encode it as a special token, or "
                f"disallowed_special=() to encode it as plain text")
        return allowed

    def bpe(self, data: bytes) -> list[int]:
        """Apply merges to one pre-token, lowest rank first (leftmost on a tie), until none
        applies. ``rank_of[i]`` is the rank of the pair starting at ``ids[i]``."""
        ids = list(map(self._byte_ids.__getitem__, data))
        rank_of = self._byte_pair_ranks(data)
        if len(ids) > LONG_PIECE:
            return self._bpe_long(ids, rank_of)
        get, merged = self._ranks.get, self._merged
        while rank_of:
            rank = min(rank_of)
            if rank == _NO_RANK:
                break
            i = rank_of.index(rank)
            ids[i:i + 2] = (merged[rank],)
            del rank_of[i]
            if i > 0:
                rank_of[i - 1] = get(ids[i - 1] << _SHIFT | ids[i], _NO_RANK)
            if i < len(rank_of):
                rank_of[i] = get(ids[i] << _SHIFT | ids[i + 1], _NO_RANK)
        return ids

    def _bpe_long(self, ids: list[int], rank_of: list[int]) -> list[int]:
        """The same merges in O(n log n) for long pre-tokens: a heap of ``(rank, position)``
        over a linked list of symbols; entries whose pair changed are skipped when popped."""
        get, merged = self._ranks.get, self._merged
        nxt = list(range(1, len(ids) + 1))
        nxt[-1] = -1
        prv = list(range(-1, len(ids) - 1))
        heap = [(rank, i) for i, rank in enumerate(rank_of) if rank != _NO_RANK]
        heapq.heapify(heap)
        while heap:
            rank, i = heapq.heappop(heap)
            j = nxt[i]
            if j < 0 or get(ids[i] << _SHIFT | ids[j]) != rank:
                continue  # stale
            ids[i], ids[j], nxt[i] = merged[rank], -1, nxt[j]
            if nxt[i] >= 0:
                prv[nxt[i]] = i
                _push_pair(heap, get(ids[i] << _SHIFT | ids[nxt[i]]), i)
            if prv[i] >= 0:
                _push_pair(heap, get(ids[prv[i]] << _SHIFT | ids[i]), prv[i])
        return [token for token in ids if token >= 0]

    def _byte_pair_ranks(self, data: bytes) -> list[int]:
        """Ranks of the pairs of adjacent bytes, looked up in C: the pairs starting at even and
        at odd offsets are read as 16-bit numbers into a 65536-entry table."""
        size = len(data) - 1
        if size < 1:
            return []
        table, rank_of = self._pair_table, [0] * size
        rank_of[0::2] = map(table.__getitem__, memoryview(data[:size + 1 - (size + 1) % 2])
                            .cast("H"))
        rank_of[1::2] = map(table.__getitem__, memoryview(data[1:1 + size - size % 2]).cast("H"))
        return rank_of

    def _build_pair_table(self) -> list[int]:
        """Rank of each pair of bytes, indexed as the native 16-bit number of the two bytes."""
        get, ids = self._ranks.get, self._byte_ids
        table = [_NO_RANK] * 65536
        for first in range(256):
            for second in range(256):
                rank = get(ids[first] << _SHIFT | ids[second])
                if rank is not None:
                    index = first | second << 8 if _LITTLE else first << 8 | second
                    table[index] = rank
        return table

    def encode_iterable(self, texts: Iterable[str], allowed_special=frozenset(),
                        disallowed_special="all") -> Iterator[int]:
        """Encode a stream of text (for example the lines of a file) in constant memory.

        Yields exactly the ids of ``encode("".join(texts), ...)``: the stream is cut only where a
        cut cannot change pre-tokens.
        """
        allowed = self._allowed_list(allowed_special)
        chunks = iter_chunks(texts, allowed, self.pretokenizer.line_cuts, chunk_chars=1 << 16)
        for chunk in chunks:
            yield from self.encode(chunk, allowed_special, disallowed_special)

    def encode_batch(self, texts: list[str], allowed_special=frozenset(),
                     disallowed_special="all", workers: int | None = None) -> list[list[int]]:
        """``[self.encode(t, ...) for t in texts]``, computed in ``workers`` processes (default:
        all cores). Long texts are cut at safe points (``iter_chunks``), so the ids are exact."""
        workers = workers or default_workers()
        if workers == 1 or sum(map(len, texts)) < BATCH_MIN_CHARS:
            return [self.encode(t, allowed_special, disallowed_special) for t in texts]
        self._allowed(allowed_special, disallowed_special, "")  # validate the arguments once
        allowed = self._allowed_list(allowed_special)
        jobs = [(index, chunk) for index, text in enumerate(texts)
                for chunk in iter_chunks([text], allowed, self.pretokenizer.line_cuts, 1 << 18)]
        _BATCH_TOKENIZERS[id(self)] = self
        try:
            with multiprocessing.get_context("fork").Pool(workers) as pool:
                args = [(id(self), chunk, allowed_special, disallowed_special) for _, chunk in jobs]
                parts = pool.map(_encode_job, args, chunksize=max(1, len(jobs) // (4 * workers)))
        finally:
            del _BATCH_TOKENIZERS[id(self)]
        out: list[list[int]] = [[] for _ in texts]
        for (index, _chunk), ids in zip(jobs, parts):
            out[index].extend(ids)
        return out

    # -- decoding -----------------------------------------------------------------------------

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        return b"".join(self.token_bytes(i) for i in ids)

    def decode(self, ids: Iterable[int]) -> str:
        """Concatenate token bytes and decode UTF-8, replacing invalid sequences."""
        return self.decode_bytes(ids).decode("utf-8", errors="replace")

    def token_spans(self, text: str, allowed_special="all") -> list[tuple[int, int, int]]:
        """``(token id, start byte, end byte)`` of each token of ``text``, for display."""
        spans, offset = [], 0
        for token_id in self.encode(text, allowed_special, disallowed_special=()):
            size = len(self.vocab[token_id])
            spans.append((token_id, offset, offset + size))
            offset += size
        return spans

    def __repr__(self) -> str:
        return (f"Tokenizer(vocab_size={self.vocab_size}, merges={len(self.merges)}, "
                f"pattern={self.pattern!r}, special_tokens={self.special_tokens!r})")


def _push_pair(heap, rank: int | None, position: int) -> None:
    if rank is not None:
        heapq.heappush(heap, (rank, position))


_BATCH_TOKENIZERS: dict[int, Tokenizer] = {}  # inherited by the forked batch workers


def _encode_job(args) -> list[int]:
    key, text, allowed_special, disallowed_special = args
    return _BATCH_TOKENIZERS[key].encode(text, allowed_special, disallowed_special)
