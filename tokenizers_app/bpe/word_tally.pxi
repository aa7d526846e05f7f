# An evaluation's whitespace-separated words counted in C: included by encoding_loop_compiled.pyx.
# Plain twin and oracle: word_tally.PlainWordTally (tests/bpe/test_word_tally.py).
# Each word (a run of characters that are not Unicode White_Space) is hashed where it stands in
# the text (FNV-1a over its code points, from a seed of this process) and looked up in an
# open-addressing table of the words seen, compared by code points; only a new word becomes a
# string. The counts live in an array until ``counter()`` asks for them.

from collections import Counter
import os as _os

from cpython.unicode cimport Py_UNICODE_ISSPACE
from libc.string cimport memcmp

cdef uint64_t FNV_PRIME = 0x100000001B3
cdef uint64_t WORD_SEED = (<uint64_t>int.from_bytes(_os.urandom(8), "little")) | 1


cdef inline bint white_space(Py_UCS4 c) noexcept:
    """Unicode White_Space: ``Py_UNICODE_ISSPACE`` less the separators ``\\x1c``-``\\x1f``."""
    if c < 128:
        return c == 32 or 9 <= c <= 13
    return Py_UNICODE_ISSPACE(c)


cdef class WordTally:
    """``add(text) -> (words, new words)``, ``counter()``, ``len()``: as ``PlainWordTally``."""
    cdef readonly list words  # the distinct words, first seen first
    cdef array.array counts_, hashes  # per word: its count, its hash
    cdef array.array slots  # the table: a word's number + 1, or 0 (a power of two long)

    def __init__(self):
        self.words = []
        self.counts_, self.hashes = array.array("q"), array.array("Q")
        self.slots = array.array("q", bytes(8 * 1024))

    def __len__(self):
        return len(self.words)

    def add(self, str text not None):
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), at = 0, start, total = 0
        cdef Py_ssize_t known = len(self.words)
        cdef int kind = PyUnicode_KIND(text)
        cdef const void *data = PyUnicode_DATA(text)
        cdef uint64_t h
        cdef Py_UCS4 c
        while at < n:
            c = PyUnicode_READ(kind, data, at)
            if white_space(c):
                at += 1
                continue
            start = at
            h = WORD_SEED
            while True:
                h = (h ^ <uint64_t>c) * FNV_PRIME
                at += 1
                if at >= n:
                    break
                c = PyUnicode_READ(kind, data, at)
                if white_space(c):
                    break
            self.count(text, kind, data, start, at, h)
            total += 1
        return total, self.words[known:]

    cdef int count(self, str text, int kind, const void *data, Py_ssize_t start, Py_ssize_t end,
                   uint64_t h) except -1:
        cdef long long *slots = self.slots.data.as_longlongs
        cdef Py_ssize_t mask = len(self.slots) - 1, j = slot_of(h, mask), number
        cdef unsigned long long *hashes = self.hashes.data.as_ulonglongs
        while slots[j]:
            number = slots[j] - 1
            if hashes[number] == h and same_text(<str>self.words[number], kind, data, start,
                                                 end):
                self.counts_.data.as_longlongs[number] += 1
                return 0
            j = (j + 1) & mask
        self.words.append(text[start:end])
        self.counts_.append(1)
        self.hashes.append(h)
        slots[j] = len(self.words)
        if 2 * len(self.words) > mask:
            self.grow()
        return 0

    cdef int grow(self) except -1:
        cdef Py_ssize_t size = 2 * len(self.slots), mask = size - 1, j, number
        cdef array.array slots = array.array("q", bytes(8 * size))
        cdef long long *into = slots.data.as_longlongs
        cdef unsigned long long *hashes = self.hashes.data.as_ulonglongs
        for number in range(len(self.words)):
            j = slot_of(hashes[number], mask)
            while into[j]:
                j = (j + 1) & mask
            into[j] = number + 1
        self.slots = slots
        return 0

    def counter(self):
        """Every word with its count, in the order first seen (a ``Counter``)."""
        return Counter(dict(zip(self.words, self.counts_)))


cdef inline bint same_text(str word, int kind, const void *data, Py_ssize_t start,
                           Py_ssize_t end):
    """Whether ``word`` holds the code points of ``data[start:end]``."""
    cdef Py_ssize_t size = end - start, i
    cdef int word_kind
    cdef const void *word_data
    if PyUnicode_GET_LENGTH(word) != size:
        return False
    word_kind, word_data = PyUnicode_KIND(word), PyUnicode_DATA(word)
    if word_kind == kind:
        return memcmp(word_data, <const char *>data + start * kind, size * kind) == 0
    for i in range(size):
        if PyUnicode_READ(word_kind, word_data, i) != PyUnicode_READ(kind, data, start + i):
            return False
    return True
