# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False
"""The encode answer's writer, compiled: ``TokenTable.encoding_json`` in one pass of C.

``token_table.py`` is the readable reference (``json.dumps`` of the plain answer is its oracle);
this twin writes the same characters (tested in tests/bpe/test_token_table.py): each id's digits,
each token's JSON text copied as it is kept, and each span's two offsets added up as it goes,
into one buffer, with ``json.dumps``' separators. No Python object is made per token; the
tokens are read and checked once, into C structs, before anything is written.
"""

from cpython.unicode cimport PyUnicode_DecodeASCII, PyUnicode_GET_LENGTH
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy

cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object text)
    const char *PyUnicode_1BYTE_DATA(object text)

cdef enum:
    DIGITS = 20  # the most digits of a size_t

cdef bytes PAIR_TEXT = b"".join(b"%02d" % pair for pair in range(100))
cdef const char *PAIRS = PAIR_TEXT  # "00", "01", ..., "99": two digits per step


cdef struct Token:
    size_t token_id, length  # the id and its byte length
    const char *text  # its JSON text (ASCII: the characters are the bytes)
    Py_ssize_t text_size


cdef inline Py_ssize_t put_text(char *out, Py_ssize_t at, const char *text,
                                Py_ssize_t size) noexcept nogil:
    memcpy(out + at, text, size)
    return at + size


cdef inline Py_ssize_t put_int(char *out, Py_ssize_t at, size_t value) noexcept nogil:
    """The decimal digits of ``value``, written at ``out + at``, two at a time:
    ``put_int(out, 0, 305)`` writes ``305`` and gives 3."""
    cdef char digits[DIGITS]
    cdef Py_ssize_t n = DIGITS
    cdef size_t pair
    while value >= 100:
        pair = 2 * (value % 100)
        value //= 100
        n -= 2
        digits[n] = PAIRS[pair]
        digits[n + 1] = PAIRS[pair + 1]
    if value >= 10:
        n -= 2
        digits[n] = PAIRS[2 * value]
        digits[n + 1] = PAIRS[2 * value + 1]
    else:
        n -= 1
        digits[n] = 48 + value
    return put_text(out, at, digits + n, DIGITS - n)


cdef Py_ssize_t read_tokens(list ids, list json_texts, list lengths, Token *tokens) except -1:
    """Each id's token, checked (an id in the table, an ASCII text, a length); gives the sum of
    the texts' sizes."""
    cdef Py_ssize_t i, k, size = len(json_texts), total = 0
    cdef object text
    for i in range(len(ids)):
        k = ids[i]
        if k < 0 or k >= size:
            raise ValueError(f"token id {ids[i]!r} is not in the table")
        text = json_texts[k]
        if type(text) is not str or not PyUnicode_IS_ASCII(text):
            raise ValueError(f"the JSON text of token {k} is not ASCII text: {text!r}")
        tokens[i].token_id = k
        tokens[i].length = lengths[k]
        tokens[i].text = PyUnicode_1BYTE_DATA(text)
        tokens[i].text_size = PyUnicode_GET_LENGTH(text)
        total += tokens[i].text_size
    return total


cdef Py_ssize_t put_answer(char *out, const Token *tokens, Py_ssize_t n) noexcept nogil:
    """The answer written at ``out``; gives its size. Each span starts where the last ended:
    its first offset's digits are copied from there."""
    cdef Py_ssize_t i, at = 0, end_at = 0, end_size = 1
    cdef size_t offset = 0
    at = put_text(out, at, b'{"ids": [', 9)
    for i in range(n):
        if i:
            at = put_text(out, at, b", ", 2)
        at = put_int(out, at, tokens[i].token_id)
    at = put_text(out, at, b'], "tokens": [', 14)
    for i in range(n):
        if i:
            at = put_text(out, at, b", ", 2)
        at = put_text(out, at, tokens[i].text, tokens[i].text_size)
    at = put_text(out, at, b'], "spans": [', 13)
    for i in range(n):
        if i:
            at = put_text(out, at, b", [", 3)
            at = put_text(out, at, out + end_at, end_size)
        else:
            at = put_text(out, at, b"[0", 2)
        at = put_text(out, at, b", ", 2)
        offset += tokens[i].length
        end_at = at
        at = put_int(out, at, offset)
        end_size = at - end_at
        at = put_text(out, at, b"]", 1)
    return put_text(out, at, b"]}", 2)


def encoding_json(list ids, list json_texts, list lengths):
    """``{"ids": ids, "tokens": [...], "spans": [...]}`` as ``json.dumps`` writes it, from a
    dense table (lists indexed by id) of each token's JSON text (ASCII, as ``json.dumps`` escapes
    it) and byte length: ``encoding_json([0, 1], ['"a"', '"bc"'], [1, 2])`` ->
    ``{"ids": [0, 1], "tokens": ["a", "bc"], "spans": [[0, 1], [1, 3]]}``. An id outside the
    table, or a text that is not ASCII, raises ``ValueError``."""
    cdef Py_ssize_t n = len(ids), size
    cdef Token *tokens = <Token *>malloc(max(n, 1) * sizeof(Token))
    cdef char *out = NULL
    if tokens == NULL:
        raise MemoryError
    try:
        size = 64 + read_tokens(ids, json_texts, lengths, tokens) + n * (3 * DIGITS + 12)
        out = <char *>malloc(size)
        if out == NULL:
            raise MemoryError
        return PyUnicode_DecodeASCII(out, put_answer(out, tokens, n), NULL)
    finally:
        free(tokens)
        free(out)
