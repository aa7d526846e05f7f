"""Training's merge loop (``learn_merges``), with work per merge proportional to the occurrences
of the merged pair. (Encoding applies merges in ``encoding_loop``.)

Every distinct word is laid out once in flat arrays: ``sym[p]`` is the token at position ``p``
(-1 once merged away), ``nxt[p]``/``prv[p]`` link the live positions of a word (-1 at its ends),
``freq[p]`` is the word's count. ``where[pair]`` lists the positions where ``pair`` starts, in
increasing order; entries go stale when a neighbour changes and are skipped when checked. A
pair is an int ``left << SHIFT | right`` (``pairs``). The best pair comes from a lazy max-heap ordered by
count, then by the tie-break (``tie_break_key``, the one place the rule is written).

Words are ``bytes`` (byte-level BPE: each byte is its own symbol) or tuples of indices into an
alphabet of symbols given as their UTF-8 bytes (character-level BPE), each with its count; or
``FlatWords``, the same indices laid end to end (an extension's segmentation by its parent).

Plain twin (recounting every pair per merge), checked in test_training.py: ``reference_train``.
"""

from __future__ import annotations

import heapq
import sys
from array import array
from collections import Counter, defaultdict, deque
from itertools import accumulate, chain, repeat
from operator import call

from .pairs import LOW, SHIFT
from .words import Words, is_byte_level, symbol_array, word_lengths_and_counts

TICK_EVERY = 1 << 16


def tie_break_key(token: bytes) -> str:
    """The tie-break rule, written once: among pairs of equal count, the lexicographically
    greatest pair of byte strings ``(left, right)`` wins, ``left`` compared first.

    The merge loop's min-heap orders pairs of equal count by ``(tie_break_key(left),
    tie_break_key(right))``, smallest first, so this key reverses the order of byte strings:
    each byte ``b`` becomes ``chr(256 - b)``, and a terminator ``chr(257)`` sorts a prefix after
    its extensions. ``tie_break_key(b"b") < tie_break_key(b"a")`` and ``tie_break_key(b"ab") <
    tie_break_key(b"a")``, so of ``(b"a", b"b")`` and ``(b"b", b"a")`` the second wins.
    """
    return "".join([chr(256 - b) for b in token]) + "\u0101"


class MergeState:
    """The words of a corpus as linked symbol arrays, with pair counts and a pair index."""

    def __init__(self, word_counts: Words, alphabet_size: int = 256, tick=lambda: None):
        self.tick = tick  # called every TICK_EVERY steps of the build, for progress and stop
        self.sym = symbol_array(word_counts, alphabet_size)
        size = len(self.sym)
        lengths, counts = word_lengths_and_counts(word_counts)
        self.nxt = array("i", range(1, size + 1))
        self.prv = array("i", range(-1, size - 1))
        nxt, prv = self.nxt, self.prv
        for index, end in enumerate(accumulate(lengths)):
            if not index % TICK_EVERY:
                tick()
            nxt[end - 1] = -1
            if end < size:
                prv[end] = -1
        self.freq = array("q", chain.from_iterable(map(repeat, counts, lengths)))
        if is_byte_level(word_counts):
            # byte-level words: the pairs are counted and indexed in C, not a step per position
            self.counts = byte_pair_counts(word_counts, tick)
            self.where = byte_pair_positions(b"".join(word_counts), tick)
        else:
            self.counts, self.where = self._count_pairs()

    def _count_pairs(self):
        """Initial weighted pair counts and the positions of each pair."""
        counts: dict[int, int] = defaultdict(int)
        where: dict[int, array] = defaultdict(lambda: array("i"))
        sym, nxt, freq = self.sym, self.nxt, self.freq
        size = len(sym)
        for start in range(0, size, TICK_EVERY):
            self.tick()
            end = min(size, start + TICK_EVERY)
            for p, q in zip(range(start, end), nxt[start:end]):
                if q >= 0:
                    pair = sym[p] << SHIFT | sym[q]
                    counts[pair] += freq[p]
                    where[pair].append(p)
        return counts, where

    def merge(self, pair: int, new: int) -> dict[int, int]:
        """Merge every live occurrence of ``pair`` into token ``new``, left to right within a
        word; update counts and index; return the new pairs (those holding ``new``) with what
        they gained. The gains are added to ``counts`` at the end, so a new pair's count may
        dip below zero meanwhile when a later occurrence takes from it."""
        a, b = pair >> SHIFT, pair & LOW
        sym, nxt, prv, freq = self.sym, self.nxt, self.prv, self.freq
        counts, where = self.counts, self.where
        fresh: dict[int, int] = defaultdict(int)
        for p in where.pop(pair, ()):
            q = nxt[p]
            if sym[p] != a or q < 0 or sym[q] != b:
                continue  # stale: this occurrence was merged or rewritten earlier
            f = freq[p]
            left = prv[p]
            right = nxt[q]
            if left >= 0:
                key = sym[left] << SHIFT
                counts[key | a] -= f
                key |= new
                fresh[key] += f
                where[key].append(left)
            if right >= 0:
                key = sym[right]
                counts[b << SHIFT | key] -= f
                key |= new << SHIFT
                fresh[key] += f
                where[key].append(p)
                prv[right] = p
            sym[p] = new
            sym[q] = -1
            nxt[p] = right
        for key, gain in fresh.items():
            counts[key] += gain
        counts.pop(pair, None)
        return fresh


def byte_pair_positions(data: bytes, tick=lambda: None) -> dict[int, array]:
    """Where each pair of adjacent bytes starts in ``data``, in increasing order, as ``left <<
    SHIFT | right -> positions``. Pairs across two words are listed too: ``merge`` skips them,
    as the left one ends its word. Each position is appended to its pair's array in C: the
    pairs are read as 16-bit numbers (``_pair_keys``) and ``operator.call`` applies the arrays'
    ``append``."""
    keys = _pair_keys(data)
    tick()
    arrays = {key: array("i") for key in set(keys)}
    appends: list = [None] * 65536
    for key, positions in arrays.items():
        appends[key] = positions.append
    consume = deque(maxlen=0).extend
    for start in range(0, len(keys), TICK_EVERY * 16):
        tick()
        end = start + TICK_EVERY * 16
        consume(map(call, map(appends.__getitem__, keys[start:end]), range(start, end)))
    return defaultdict(lambda: array("i"), ((_pair_of_key(key), positions)
                                            for key, positions in arrays.items()))


def _pair_keys(data: bytes) -> array:
    """``keys[p]``: the bytes ``data[p]``, ``data[p + 1]`` as one 16-bit number in this machine's
    byte order (see ``_pair_of_key``), built in C from the even and the odd offsets."""
    keys = array("H", bytes(2 * max(0, len(data) - 1)))
    keys[0::2] = array("H", data[:len(data) // 2 * 2])
    keys[1::2] = array("H", data[1:1 + (len(data) - 1) // 2 * 2])
    return keys


def _pair_of_key(key: int) -> int:
    """The pair ``left << SHIFT | right`` held in a 16-bit key of ``_pair_keys``."""
    low, high = key & 255, key >> 8
    return low << SHIFT | high if sys.byteorder == "little" else high << SHIFT | low


def byte_pair_counts(word_counts: dict[bytes, int], tick=lambda: None) -> dict[int, int]:
    """Weighted counts of the pairs of adjacent bytes in the words, as ``left << SHIFT |
    right -> count``. Words of equal count are joined and their pairs counted in C
    (``Counter`` over the 16-bit keys of ``_pair_keys``); the pairs across two joined words
    are taken off again."""
    by_count: dict[int, list[bytes]] = defaultdict(list)
    for word, count in word_counts.items():
        by_count[count].append(word)
    counts: dict[int, int] = defaultdict(int)
    for count, words in by_count.items():
        tick()
        pairs = Counter(_pair_keys(b"".join(words)))
        pairs.subtract(array("H", bytes(chain.from_iterable(  # read as _pair_keys reads them
            (left[-1], right[0]) for left, right in zip(words, words[1:])))))
        for key, occurrences in pairs.items():
            if occurrences:
                counts[_pair_of_key(key)] += count * occurrences
    return counts


def learn_merges(word_counts: Words, num_merges: int,
                 min_frequency: int = 1, ticker=None, alphabet: list[bytes] | None = None,
                 skip_known: bool = False) -> tuple[list[tuple[bytes, bytes]], list[int]]:
    """Learn up to ``num_merges`` merges over weighted words; returns (merges, merge counts).
    ``alphabet`` (default: the 256 single bytes) holds the initial symbols; words index it
    (tuples, or ``FlatWords``).
    ``skip_known`` (extension): a pair that would make a token already made is never learned.

    ``learn_merges({b"aaa": 2}, 2) -> ([(b"a", b"a"), (b"aa", b"a")], [4, 2])``;
    ``learn_merges({(0, 0, 1): 2}, 5, alphabet=[b"a", b"a</w>"]) -> ([(b"a", b"a</w>"),
    (b"a", b"aa</w>")], [2, 2])`` (a tie: ``b"a</w>" > b"a"``)
    """
    tokens = list(alphabet) if alphabet is not None else [bytes([b]) for b in range(256)]
    keys = [tie_break_key(t) for t in tokens]  # tokens: internal id -> bytes
    known = set(tokens) if skip_known else None  # tokens made so far, when they are skipped
    if ticker:
        ticker("merge", 0, num_merges, force=True)
    state = MergeState(word_counts, len(tokens),
                       (lambda: ticker("merge", 0, num_merges)) if ticker else (lambda: None))
    # heap entries: (-count, (key of left, key of right), pair); the keys are shared strings
    heap = [(-count, (keys[pair >> SHIFT], keys[pair & LOW]), pair)
            for pair, count in state.counts.items() if count > 0]
    heapq.heapify(heap)
    deferred = Deferred()
    merges, counts = [], []  # list[tuple[bytes, bytes]], and each merge's count
    while len(merges) < num_merges:
        # choose the best pair: highest count, then the tie-break
        pair, count = _pop_best(heap, state.counts)
        while deferred.may_hold(count):  # a deferred pair may beat it: let them in first
            if pair is not None:
                heapq.heappush(heap, (-count, (keys[pair >> SHIFT], keys[pair & LOW]), pair))
            for held in deferred.release():
                if state.counts.get(held, 0) > 0:
                    key = (keys[held >> SHIFT], keys[held & LOW])
                    heapq.heappush(heap, (-state.counts[held], key, held))
            pair, count = _pop_best(heap, state.counts)
        if pair is None or count < min_frequency:
            break
        left, right = tokens[pair >> SHIFT], tokens[pair & LOW]
        if known is not None and (left + right in known or known.add(left + right)):
            state.counts[pair] = 0  # already a token (skip_known): left apart for good
            continue
        # record the merge as a new token
        merges.append((left, right))
        counts.append(count)
        tokens.append(left + right)
        keys.append(tie_break_key(left + right))
        # rewrite the words that hold it; the new pairs are pushed with their counts, but
        # those far below this merge's count wait in `deferred`
        below = count.bit_length() - DEFER_BITS
        for fresh in state.merge(pair, len(tokens) - 1):
            gained = state.counts[fresh]
            if gained <= 0:
                continue
            if gained.bit_length() <= below:
                deferred.hold(fresh, gained)
            else:
                key = (keys[fresh >> SHIFT], keys[fresh & LOW])
                heapq.heappush(heap, (-gained, key, fresh))
        if ticker:
            ticker("merge", len(merges), num_merges)
    if ticker:
        ticker("merge", len(merges), len(merges), force=True)  # done, even when it stopped early
    return merges, counts


DEFER_BITS = 4  # new pairs under 1/16 of the merge's count wait outside the heap


class Deferred:
    """New pairs kept out of the heap while their count is far below the best: most never
    come near it, so they never cost a push. They are held in buckets by the bit length of
    their count when held; counts only fall, so a pair in bucket ``k`` is below ``2**k`` for
    good, and the heap's best is safe while it is at least ``2**k`` for the highest ``k``."""

    def __init__(self):
        self.buckets: dict[int, list[int]] = defaultdict(list)

    def hold(self, pair: int, count: int) -> None:
        self.buckets[count.bit_length()].append(pair)

    def may_hold(self, count: int) -> bool:
        """Whether a held pair may count ``count`` or more (``count`` 0: the heap is empty)."""
        return bool(self.buckets) and count < 1 << max(self.buckets)

    def release(self) -> list[int]:
        """The pairs of the highest bucket, out of the buckets."""
        return self.buckets.pop(max(self.buckets))


def _pop_best(heap, counts):
    """Pop until an entry holds its pair's current count. An entry above the current count
    (the pair lost occurrences) is pushed back with the current count; one below it is stale
    (a higher entry was pushed when the count grew)."""
    while heap:
        negative, key, pair = heapq.heappop(heap)
        current = counts.get(pair, 0)
        if current == -negative:
            return pair, current
        if 0 < current < -negative:
            heapq.heappush(heap, (-current, key, pair))
    return None, 0
