# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False
"""Encoding's inner loop, compiled: ``encoding_loop.MergeTable`` with its tables in C.

``encoding_loop.py`` is the readable reference; this twin gives the same ids (tested in
tests/bpe/test_compiled.py). Within a pre-token the pair of lowest rank present is merged,
leftmost first on a tie, until no pair has a rank:

- a pre-token of up to ``LONG_PRETOKEN`` bytes keeps its ids and the ranks of its pairs in two C
  arrays and scans them for the lowest rank (as ``bpe_many`` does with ``min`` and ``index``);
- a longer one uses a heap of ``rank << 32 | position`` over linked symbols, stale entries
  skipped (as ``bpe_long`` does), so that ``"a" * 100_000`` is O(n log n).

The rank of a pair of ids comes from an open-addressing hash table of packed pairs (``left << 32
| right``, as in ``pairs``); that of a pair of bytes from a table of 65,536 ranks. Each id's
Python int is made once, so a pre-token's tuple of ids costs no new ints.
"""

from cpython cimport array
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.dict cimport PyDict_GetItemWithError
from cpython.object cimport PyObject
from cpython.unicode cimport (
    PyUnicode_AsUTF8String,
    PyUnicode_DATA,
    PyUnicode_GET_LENGTH,
    PyUnicode_KIND,
    PyUnicode_Substring,
)
from cpython.ref cimport Py_INCREF
from cpython.tuple cimport PyTuple_New, PyTuple_SET_ITEM

cdef extern from "Python.h":
    Py_UCS4 PyUnicode_READ(int kind, const void *data, Py_ssize_t index) nogil

from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memmove, memset

import array

from .encoding_loop import LONG_PRETOKEN  # the twins' one threshold, defined there
from .pairs import SHIFT

if SHIFT != 32:  # the C code packs a pair as left << 32 | right, as pairs does
    raise ImportError("pairs.SHIFT is not 32: the compiled loops no longer match pairs.py")

cdef enum:
    NONE = 0x7FFFFFFF  # no rank: the pair is not a merge
cdef uint64_t EMPTY = <uint64_t>-1
cdef Py_ssize_t LONG = LONG_PRETOKEN  # longer pre-tokens are merged with a heap


cdef inline Py_ssize_t slot_of(uint64_t key, Py_ssize_t mask) noexcept nogil:
    return <Py_ssize_t>((key * <uint64_t>0x9E3779B97F4A7C15) >> 32) & mask


cdef class MergeTable:
    """``ranks``: ``left id << SHIFT | right id -> rank``; ``merged[rank]``: the new id;
    ``byte_ids[b]``: the id of byte ``b`` (as ``encoding_loop.MergeTable`` takes them)."""
    cdef readonly dict ranks
    cdef readonly list merged, byte_ids
    cdef uint64_t *keys
    cdef int32_t *values
    cdef Py_ssize_t mask
    cdef int32_t *merged_ids
    cdef int32_t byte_id[256]
    cdef int32_t *byte_ranks
    cdef list id_objects  # id -> its Python int, for the ids that merges make or bytes have
    cdef dict __dict__  # like the pure class, an instance takes attributes (tests wrap bpe_many)

    def __cinit__(self):
        self.keys = NULL
        self.values = NULL
        self.merged_ids = NULL
        self.byte_ranks = NULL

    def __dealloc__(self):
        free(self.keys)
        free(self.values)
        free(self.merged_ids)
        free(self.byte_ranks)

    def __init__(self, dict ranks, list merged, list byte_ids):
        self.ranks, self.merged, self.byte_ids = ranks, merged, byte_ids
        cdef Py_ssize_t slots = 1024, s, b
        while slots < 2 * len(ranks) + 2:
            slots *= 2
        self.mask = slots - 1
        self.keys = <uint64_t *>malloc(slots * sizeof(uint64_t))
        self.values = <int32_t *>malloc(slots * sizeof(int32_t))
        self.merged_ids = <int32_t *>malloc((len(merged) + 1) * sizeof(int32_t))
        self.byte_ranks = <int32_t *>malloc(65536 * sizeof(int32_t))
        if not (self.keys and self.values and self.merged_ids and self.byte_ranks):
            raise MemoryError("no memory for the merge table")
        memset(self.keys, 0xFF, slots * sizeof(uint64_t))
        cdef uint64_t key
        for pair, rank in ranks.items():
            key = pair
            s = slot_of(key, self.mask)
            while self.keys[s] != EMPTY and self.keys[s] != key:
                s = (s + 1) & self.mask
            self.keys[s] = key
            self.values[s] = rank
        for rank, token_id in enumerate(merged):
            self.merged_ids[rank] = token_id
        for b in range(256):
            self.byte_id[b] = byte_ids[b]
        cdef int first, second
        for first in range(256):
            for second in range(256):
                self.byte_ranks[first | second << 8] = self.rank(self.byte_id[first],
                                                                 self.byte_id[second])
        top = max(max(byte_ids), max(merged, default=0))
        self.id_objects = list(range(top + 1)) if top < 4 * (len(merged) + 256) + 1024 else None

    cdef inline int32_t rank(self, int32_t left, int32_t right) noexcept nogil:
        """The rank of merging ``left`` and ``right`` (``NONE``: no merge)."""
        cdef uint64_t key = (<uint64_t>left) << 32 | <uint32_t>right
        cdef Py_ssize_t s = slot_of(key, self.mask)
        while self.keys[s] != EMPTY:
            if self.keys[s] == key:
                return self.values[s]
            s = (s + 1) & self.mask
        return NONE

    def bpe_many(self, pretokens):
        """The ids of each pre-token (``bytes``), as tuples."""
        cdef Buffers room
        init_buffers(&room)
        try:
            return [self.merge_one(pretoken if type(pretoken) is bytes else bytes(pretoken),
                                   &room)
                    for pretoken in pretokens]
        finally:
            free_buffers(&room)

    def bpe_flat(self, pretokens):
        """``bpe_many``'s ids laid end to end, and how many ids each pre-token has, as two
        ``array("i")``; no tuple is made per pre-token."""
        cdef Buffers room
        cdef array.array ids = array.array("i"), lengths = array.array("i")
        cdef int count
        init_buffers(&room)
        try:
            for pretoken in pretokens:
                count = <int>self.merge_into(
                    pretoken if type(pretoken) is bytes else bytes(pretoken), &room)
                array.extend_buffer(ids, <char *>room.ids, count)
                array.extend_buffer(lengths, <char *>&count, 1)
        finally:
            free_buffers(&room)
        return ids, lengths

    def merge_ids_many(self, sequences, int32_t missing=-1):
        """The ids left of each sequence of ids (lists of any ids of the table, not bytes; a
        None stands for ``missing``), merged as ``merge_bytes`` merges from its bytes' ids on:
        a tuple each."""
        cdef Buffers room
        cdef Py_ssize_t n, i, count
        out = []
        init_buffers(&room)
        try:
            for sequence in sequences:
                n = len(sequence)
                if n > room.size:
                    grow_buffers(&room, n)
                for i in range(n):
                    item = sequence[i]
                    room.ids[i] = missing if item is None else item
                for i in range(n - 1):
                    room.rank_of[i] = self.rank(room.ids[i], room.ids[i + 1])
                if n < 2:
                    count = n
                elif n > LONG:
                    count = self.merge_long(room.ids, room.rank_of, n, room.links,
                                            room.links + n)
                else:
                    count = self.merge_short(room.ids, room.rank_of, n)
                out.append(self.as_tuple(room.ids, count))
        finally:
            free_buffers(&room)
        return out

    cdef tuple merge_one(self, bytes data, Buffers *room):
        """The ids of one pre-token, as a tuple."""
        cdef Py_ssize_t count = self.merge_into(data, room)
        return self.as_tuple(room.ids, count)

    cdef Py_ssize_t merge_into(self, bytes data, Buffers *room) except -1:
        """Merge one pre-token into ``room.ids`` (grown when it is longer); returns how many
        ids it has."""
        cdef Py_ssize_t n = PyBytes_GET_SIZE(data), count
        cdef const unsigned char *text = <const unsigned char *>PyBytes_AS_STRING(data)
        if n > room.size:
            grow_buffers(room, n)
        if n > LONG:  # a long pre-token lets other threads run meanwhile
            with nogil:
                count = self.merge_bytes(text, n, room.ids, room.rank_of, room.links)
        else:
            count = self.merge_bytes(text, n, room.ids, room.rank_of, room.links)
        return count

    def encode_gpt2(self, str text not None, dict cache not None, Py_ssize_t cache_size,
                    const unsigned char[::1] classes not None):
        """``Tokenizer.encode_ordinary`` with the gpt2 pattern, in one pass: each pre-token
        (``gpt2_end``) is looked up in ``cache`` (pre-token -> tuple of ids) or merged and
        added to it (emptied first when it holds ``cache_size`` pre-tokens). ``classes``:
        ``pretokenize.character_classes()``."""
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), start = 0, end
        cdef int kind = PyUnicode_KIND(text)
        cdef const void *data = PyUnicode_DATA(text)
        cdef const unsigned char *table = &classes[0]
        cdef PyObject *found
        cdef Buffers room
        out = []
        init_buffers(&room)
        try:
            while start < n:
                end = gpt2_end(kind, data, start, n, table)
                piece = PyUnicode_Substring(text, start, end)
                found = PyDict_GetItemWithError(cache, piece)
                if found != NULL:
                    out.extend(<tuple>found)
                else:
                    ids = self.merge_one(PyUnicode_AsUTF8String(piece), &room)
                    if len(cache) >= cache_size:
                        cache.clear()
                    cache[piece] = ids
                    out.extend(ids)
                start = end
        finally:
            free_buffers(&room)
        return out

    cdef Py_ssize_t merge_bytes(self, const unsigned char *data, Py_ssize_t n, int32_t *ids,
                                int32_t *rank_of, int32_t *links) noexcept nogil:
        """Merge the bytes ``data[:n]`` into ``ids``; returns how many ids are left."""
        cdef Py_ssize_t i
        for i in range(n):
            ids[i] = self.byte_id[data[i]]
        if n < 2:
            return n
        for i in range(n - 1):
            rank_of[i] = self.byte_ranks[data[i] | data[i + 1] << 8]
        if n > LONG:
            return self.merge_long(ids, rank_of, n, links, links + n)
        return self.merge_short(ids, rank_of, n)

    cdef Py_ssize_t merge_short(self, int32_t *ids, int32_t *rank_of,
                                Py_ssize_t n) noexcept nogil:
        """Scan for the lowest rank, merge it, repeat (``encoding_loop``'s ``bpe_many``)."""
        cdef Py_ssize_t i, best, pairs = n - 1
        cdef int32_t low, new
        while pairs > 0:
            low, best = NONE, -1
            for i in range(pairs):
                if rank_of[i] < low:
                    low, best = rank_of[i], i
            if best < 0:
                break
            new = ids[best] = self.merged_ids[low]
            memmove(&ids[best + 1], &ids[best + 2], (pairs - best - 1) * sizeof(int32_t))
            memmove(&rank_of[best], &rank_of[best + 1], (pairs - best - 1) * sizeof(int32_t))
            pairs -= 1
            if best:
                rank_of[best - 1] = self.rank(ids[best - 1], new)
            if best < pairs:
                rank_of[best] = self.rank(new, ids[best + 1])
        return pairs + 1

    cdef Py_ssize_t merge_long(self, int32_t *ids, int32_t *rank_of, Py_ssize_t n,
                               int32_t *nxt, int32_t *prv) noexcept nogil:
        """A heap of ``rank << 32 | position`` over linked symbols (``bpe_long``). It holds at
        most ``3 * n`` entries: one per pair at first, then two per merge."""
        cdef uint64_t *heap = <uint64_t *>malloc(3 * n * sizeof(uint64_t))
        cdef uint64_t top
        cdef Py_ssize_t size = 0, i, j, out = 0
        cdef int32_t rank
        if heap == NULL:
            return self.merge_short(ids, rank_of, n)  # slower, needs no memory
        for i in range(n):
            nxt[i] = i + 1
            prv[i] = i - 1
        nxt[n - 1] = -1
        for i in range(n - 1):
            if rank_of[i] != NONE:
                size = heap_push(heap, size, (<uint64_t>rank_of[i]) << 32 | <uint64_t>i)
        while size:
            top = heap[0]
            size = heap_pop(heap, size)
            rank = <int32_t>(top >> 32)
            i = <Py_ssize_t><uint32_t>top
            j = nxt[i]
            if j < 0 or ids[i] < 0 or self.rank(ids[i], ids[j]) != rank:
                continue  # stale: a symbol merged away, or a pair that changed
            ids[i] = self.merged_ids[rank]
            ids[j] = -1
            nxt[i] = nxt[j]
            if nxt[i] >= 0:
                prv[nxt[i]] = i
                rank = self.rank(ids[i], ids[nxt[i]])
                if rank != NONE:
                    size = heap_push(heap, size, (<uint64_t>rank) << 32 | <uint64_t>i)
            if prv[i] >= 0:
                rank = self.rank(ids[prv[i]], ids[i])
                if rank != NONE:
                    size = heap_push(heap, size, (<uint64_t>rank) << 32 | <uint64_t>prv[i])
        free(heap)
        for i in range(n):
            if ids[i] >= 0:
                ids[out] = ids[i]
                out += 1
        return out

    cdef tuple as_tuple(self, int32_t *ids, Py_ssize_t count):
        cdef tuple result = PyTuple_New(count)
        cdef Py_ssize_t i
        cdef object value
        for i in range(count):
            value = self.id_objects[ids[i]] if self.id_objects is not None else ids[i]
            Py_INCREF(value)
            PyTuple_SET_ITEM(result, i, value)
        return result


cdef inline Py_ssize_t heap_push(uint64_t *heap, Py_ssize_t size, uint64_t entry) noexcept nogil:
    cdef Py_ssize_t i = size, parent
    while i > 0:
        parent = (i - 1) >> 1
        if heap[parent] <= entry:
            break
        heap[i] = heap[parent]
        i = parent
    heap[i] = entry
    return size + 1


cdef inline Py_ssize_t heap_pop(uint64_t *heap, Py_ssize_t size) noexcept nogil:
    """Remove the smallest entry (``heap[0]``); returns the new size."""
    size -= 1
    cdef uint64_t last = heap[size]
    cdef Py_ssize_t i = 0, child
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and heap[child + 1] < heap[child]:
            child += 1
        if heap[child] >= last:
            break
        heap[i] = heap[child]
        i = child
    if size:
        heap[i] = last
    return size


cdef struct Buffers:
    Py_ssize_t size
    int32_t *ids
    int32_t *rank_of
    int32_t *links


cdef void init_buffers(Buffers *room) noexcept:
    room.size = 0
    room.ids = room.rank_of = room.links = NULL


cdef int grow_buffers(Buffers *room, Py_ssize_t n) except -1:
    free_buffers(room)
    n = max(2 * n, 256)
    room.ids = <int32_t *>malloc(n * sizeof(int32_t))
    room.rank_of = <int32_t *>malloc(n * sizeof(int32_t))
    room.links = <int32_t *>malloc(2 * n * sizeof(int32_t))
    if room.ids == NULL or room.rank_of == NULL or room.links == NULL:
        free_buffers(room)
        raise MemoryError("no memory to encode")
    room.size = n
    return 0


cdef void free_buffers(Buffers *room) noexcept:
    free(room.ids)
    free(room.rank_of)
    free(room.links)
    init_buffers(room)


# -- the gpt2 pattern, scanned: gpt2_end (used by encode_gpt2) and gpt2_split -------------------
include "gpt2_scan.pxi"
include "pretoken_tally.pxi"
include "word_tally.pxi"
