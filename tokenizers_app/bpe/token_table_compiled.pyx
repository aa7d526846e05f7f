# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False
"""The encode answer's writer, compiled: ``TokenTable.encoding_json`` in one pass of C.

``token_table.py`` is the readable reference (``json.dumps`` of the plain answer is its oracle);
this twin writes the same characters (tested in tests/bpe/test_token_table.py): each id's digits,
each token's JSON text copied as it is kept, and each span's two offsets added up as it goes,
into one buffer, with ``json.dumps``' separators. No Python object is made per token.
"""

from cpython.unicode cimport PyUnicode_DecodeASCII, PyUnicode_GET_LENGTH
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy

cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object text)
    const char *PyUnicode_1BYTE_DATA(object text)

cdef enum:
    DIGITS = 20  # the most digits of a Py_ssize_t


cdef inline Py_ssize_t put_text(char *out, Py_ssize_t at, const char *text,
                                Py_ssize_t size) noexcept nogil:
    memcpy(out + at, text, size)
    return at + size


cdef inline Py_ssize_t put_int(char *out, Py_ssize_t at, Py_ssize_t value) noexcept nogil:
    """The decimal digits of ``value`` (>= 0), written at ``out + at``: ``put_int(out, 0, 305)``
    writes ``305`` and gives 3."""
    cdef char digits[DIGITS]
    cdef Py_ssize_t n = 0
    while True:
        digits[n] = 48 + value % 10
        value //= 10
        n += 1
        if value == 0:
            break
    while n:
        n -= 1
        out[at] = digits[n]
        at += 1
    return at


cdef Py_ssize_t checked_id(object token_id, Py_ssize_t size) except -1:
    cdef Py_ssize_t k = token_id
    if k < 0 or k >= size:
        raise ValueError(f"token id {token_id!r} is not in the table")
    return k


def encoding_json(list ids, list json_texts, list lengths):
    """``{"ids": ids, "tokens": [...], "spans": [...]}`` as ``json.dumps`` writes it, from a
    dense table (lists indexed by id) of each token's JSON text (ASCII, as ``json.dumps`` escapes
    it) and byte length: ``encoding_json([0, 1], ['"a"', '"bc"'], [1, 2])`` ->
    ``{"ids": [0, 1], "tokens": ["a", "bc"], "spans": [[0, 1], [1, 3]]}``. An id outside the
    table, or a text that is not ASCII, raises ``ValueError``."""
    cdef Py_ssize_t n = len(ids), size = len(json_texts), i, k, at = 0, offset = 0, length
    cdef Py_ssize_t bound = 64
    cdef object text
    cdef char *out
    for i in range(n):  # check every id and text, and bound the answer's size
        k = checked_id(ids[i], size)
        text = json_texts[k]
        if type(text) is not str or not PyUnicode_IS_ASCII(text):
            raise ValueError(f"the JSON text of token {k} is not ASCII text: {text!r}")
        if <Py_ssize_t>lengths[k] < 0:
            raise ValueError(f"token {k} has a negative length")
        bound += PyUnicode_GET_LENGTH(text) + 3 * DIGITS + 12
    out = <char *>malloc(bound)
    if out == NULL:
        raise MemoryError
    try:
        at = put_text(out, at, b'{"ids": [', 9)
        for i in range(n):
            if i:
                at = put_text(out, at, b", ", 2)
            at = put_int(out, at, <Py_ssize_t>ids[i])
        at = put_text(out, at, b'], "tokens": [', 14)
        for i in range(n):
            if i:
                at = put_text(out, at, b", ", 2)
            text = json_texts[<Py_ssize_t>ids[i]]
            at = put_text(out, at, PyUnicode_1BYTE_DATA(text), PyUnicode_GET_LENGTH(text))
        at = put_text(out, at, b'], "spans": [', 13)
        for i in range(n):
            length = lengths[<Py_ssize_t>ids[i]]
            at = put_text(out, at, b", [" if i else b"[", 3 if i else 1)
            at = put_int(out, at, offset)
            at = put_text(out, at, b", ", 2)
            offset += length
            at = put_int(out, at, offset)
            at = put_text(out, at, b"]", 1)
        at = put_text(out, at, b"]}", 2)
        return PyUnicode_DecodeASCII(out, at, NULL)
    finally:
        free(out)
