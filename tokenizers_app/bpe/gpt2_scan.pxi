# The gpt2 pattern scanned in C: included by encoding_loop_compiled.pyx (Cython's ``include``),
# beside the one-pass encoder that uses it. Tested against `regex` in tests/bpe/test_compiled.py.
# 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ , alternative by
# alternative, over the classes of every code point as `regex` gives them
# (``pretokenize.character_classes``: 1 letter, 2 number, 4 space).

cdef enum:
    LETTER = 1
    NUMBER = 2
    SPACE = 4


cdef inline Py_ssize_t run_of(int kind, const void *data, Py_ssize_t i, Py_ssize_t n,
                              const unsigned char *table, unsigned char wanted) noexcept nogil:
    """The end of the run from ``i`` of characters whose class is ``wanted`` (0: punctuation,
    none of letter, number, space)."""
    if wanted:
        while i < n and table[PyUnicode_READ(kind, data, i)] & wanted:
            i += 1
    else:
        while i < n and not table[PyUnicode_READ(kind, data, i)]:
            i += 1
    return i


cdef Py_ssize_t gpt2_end(int kind, const void *data, Py_ssize_t i, Py_ssize_t n,
                         const unsigned char *table) noexcept nogil:
    """Where the gpt2 pre-token that starts at ``i`` ends."""
    cdef Py_UCS4 c = PyUnicode_READ(kind, data, i), d, e
    cdef Py_ssize_t j = i, m
    if c == 39 and i + 1 < n:  # a contraction: 's 't 'm 'd, 're 've 'll
        d = PyUnicode_READ(kind, data, i + 1)
        if d == 115 or d == 116 or d == 109 or d == 100:
            return i + 2
        if i + 2 < n:
            e = PyUnicode_READ(kind, data, i + 2)
            if (e == 101 and (d == 114 or d == 118)) or (d == 108 and e == 108):
                return i + 3
    if c == 32 and i + 1 < n:  # " ?" before a letter, number or punctuation run
        d = PyUnicode_READ(kind, data, i + 1)
        if not table[d] & SPACE:
            j, c = i + 1, d
    cdef unsigned char k = table[c]
    if k & LETTER:
        return run_of(kind, data, j + 1, n, table, LETTER)
    if k & NUMBER:
        return run_of(kind, data, j + 1, n, table, NUMBER)
    if not k:
        return run_of(kind, data, j + 1, n, table, 0)
    m = run_of(kind, data, i + 1, n, table, SPACE)  # \s+(?!\S), else \s+
    if m == n or m - i == 1:
        return m
    return m - 1


def gpt2_split(str text not None, const unsigned char[::1] classes not None):
    """``PreTokenizer("gpt2").split(text)``: the gpt2 pattern's pre-tokens, scanned in C."""
    cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), start = 0, end
    cdef int kind = PyUnicode_KIND(text)
    cdef const void *data = PyUnicode_DATA(text)
    cdef const unsigned char *table = &classes[0]
    out = []
    while start < n:
        end = gpt2_end(kind, data, start, n, table)
        out.append(PyUnicode_Substring(text, start, end))
        start = end
    return out
