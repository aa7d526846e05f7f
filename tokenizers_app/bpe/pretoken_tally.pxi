# The counts of an evaluation of byte-level BPE with the gpt2 pattern, scanned in C: included by
# encoding_loop_compiled.pyx after gpt2_scan.pxi (it uses gpt2_end and MergeTable.merge_into).
# Plain twin and oracle: pretoken_tally.PlainPreTokenTally (tests/bpe/test_pretoken_tally.py).
# ``add(text)`` scans the text's pre-tokens once, with no encode of each occurrence: a pre-token
# seen before costs a dict lookup and a count; a new one is merged once (``merge_into``), its
# tokens checked to spell its bytes, and its facts (``pretoken_totals.pretoken_facts``) found.
# With ``count_words``, it also counts the text's whitespace-separated words (``str.split``'s),
# from the same scan: a word that is one pre-token, less its leading space, is counted by that
# pre-token's number (no string made); any other by its text (``words()``).

from cpython.long cimport PyLong_AsSsize_t
from collections import Counter
from cpython.unicode cimport Py_UNICODE_ISSPACE
from libc.string cimport memcmp

cdef struct Word:  # the word being read by ``read_words``
    Py_ssize_t first  # its first character, or -1 between words
    Py_ssize_t start, end, number  # the pre-token holding its first character

cdef enum:
    J_LEAD = 1  # pretoken_totals' junction code bits
    J_TRAIL = 2
    J_LEAD_ONE = 4
    J_TRAIL_ONE = 8
    J_WHOLE = 16
    FIELDS = 6  # the facts kept per pre-token, in FACT_FIELDS' order

FACT_FIELDS = ("words", "one_token_words", "multibyte", "cut", "own_word", "covered")


cdef class PreTokenTally:
    """Distinct pre-tokens in the order first seen (``pretokens``), their ids (``ids``, tuples),
    how often each occurs (``counts()``), their facts (``columns()``) and the joins between
    neighbours inside each text added (``joins()``, as ``pretoken_totals.count_joins``)."""
    cdef MergeTable table
    cdef readonly dict index  # pre-token -> its number
    cdef readonly list pretokens, ids
    cdef const unsigned char[::1] classes
    cdef array.array spellings, starts, special  # each id's bytes, at starts[id]:starts[id + 1]
    cdef array.array counts_, facts, codes
    cdef long long joins_[4]
    cdef Buffers room
    cdef readonly bint count_words
    cdef array.array word_counts_  # per pre-token: its occurrences as a whole word
    cdef object other_words  # the words that are not one pre-token -> their counts (Counter)

    def __cinit__(self):
        init_buffers(&self.room)

    def __dealloc__(self):
        free_buffers(&self.room)

    def __init__(self, MergeTable table not None, dict vocab not None, special_ids,
                 const unsigned char[::1] classes not None, bint count_words=False):
        self.table, self.classes = table, classes
        self.count_words, self.word_counts_ = count_words, array.array("q")
        self.other_words = Counter()
        self.index, self.pretokens, self.ids = {}, [], []
        top = max(vocab) + 1 if vocab else 0
        self.spellings, self.starts = array.array("B"), array.array("q", [0])
        for token_id in range(top):
            self.spellings.frombytes(vocab.get(token_id, b""))
            self.starts.append(len(self.spellings))
        self.special = array.array("B", bytes(top))
        for token_id in special_ids:
            if 0 <= token_id < top:
                self.special[token_id] = 1
        self.counts_, self.facts, self.codes = array.array("q"), array.array("i"), array.array("B")
        memset(self.joins_, 0, sizeof(self.joins_))

    def add(self, str text not None):
        """Count the pre-tokens of ``text`` (one piece of a document: nothing joins across its
        ends) and the joins between them."""
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH(text), start = 0, end, number
        cdef int kind = PyUnicode_KIND(text)
        cdef const void *data = PyUnicode_DATA(text)
        cdef const unsigned char *table = &self.classes[0]
        cdef unsigned char code, before = 0, second = 0  # the codes of the two pre-tokens before
        cdef PyObject *found
        cdef Word word  # the word being read (count_words)
        word.first = -1
        cdef list other = []  # the words that are not one pre-token, counted at the end
        while start < n:
            end = gpt2_end(kind, data, start, n, table)
            piece = PyUnicode_Substring(text, start, end)
            found = PyDict_GetItemWithError(self.index, piece)
            if found != NULL:
                number = PyLong_AsSsize_t(<object>found)
            else:
                number = self.learn(piece)
            self.counts_.data.as_longlongs[number] += 1
            code = self.codes.data.as_uchars[number]
            if code & J_LEAD:
                if before & J_TRAIL:
                    self.joins_[0] += 1
                    if code & J_LEAD_ONE:
                        self.joins_[2] += 1
                    if before & J_WHOLE and second & J_TRAIL:
                        self.joins_[3] += 1
                if before & J_TRAIL_ONE:
                    self.joins_[1] += 1
            second, before = before, code
            if self.count_words:
                self.read_words(text, kind, data, start, end, number, &word, other)
            start = end
        if self.count_words:
            if word.first >= 0:
                self.end_word(text, kind, data, n, &word, other)
            self.other_words.update(other)

    cdef int read_words(self, str text, int kind, const void *data, Py_ssize_t start,
                        Py_ssize_t end, Py_ssize_t number, Word *word, list other) except -1:
        """Read the pre-token ``number`` at ``start:end`` for words: runs of characters that are
        not ``Py_UNICODE_ISSPACE`` (``str.split``'s). A word starting in it remembers it."""
        cdef Py_ssize_t at
        for at in range(start, end):
            if Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, at)):
                if word.first >= 0:
                    self.end_word(text, kind, data, at, word, other)
            elif word.first < 0:
                word.first, word.start, word.end, word.number = at, start, end, number
        return 0

    cdef int end_word(self, str text, int kind, const void *data, Py_ssize_t at, Word *word,
                      list other) except -1:
        """Count the word ending at ``at``: by its pre-token's number when it is that one
        pre-token (which ends where the word does and starts at it or at a space just before
        it), else by its text."""
        if word.end == at and (word.start == word.first or (
                word.start == word.first - 1 and PyUnicode_READ(kind, data, word.start) == 32)):
            self.word_counts_.data.as_longlongs[word.number] += 1
        else:
            other.append(PyUnicode_Substring(text, word.first, at))
        word.first = -1
        return 0

    cdef Py_ssize_t learn(self, str piece) except -1:
        """Number a new pre-token, merge its bytes, check that its tokens spell them, find its
        facts."""
        cdef bytes data = PyUnicode_AsUTF8String(piece)
        cdef const unsigned char *text = <const unsigned char *>PyBytes_AS_STRING(data)
        cdef Py_ssize_t size = PyBytes_GET_SIZE(data), count, i, at = 0, token, length
        count = self.table.merge_into(data, &self.room)
        cdef int32_t *ids = self.room.ids
        cdef int32_t *ends = self.room.rank_of  # as long as ids
        cdef long long *starts = self.starts.data.as_longlongs
        cdef Py_ssize_t top = len(self.starts) - 1  # ids below it have a spelling
        for i in range(count):
            token = ids[i]
            length = starts[token + 1] - starts[token] if token < top else -1
            if length < 0 or at + length > size or memcmp(
                    text + at, self.spellings.data.as_uchars + starts[token], length):
                break
            at += length
            ends[i] = <int32_t>at
        else:
            if at == size:
                return self.keep(piece, self.table.as_tuple(ids, count),
                                 self.find_facts(piece, text, size, ids, ends, count))
        raise ValueError(f"the tokens {self.table.as_tuple(ids, count)} do not spell the "
                         f"pre-token {piece!r}")

    cdef unsigned char find_facts(self, str piece, const unsigned char *text, Py_ssize_t size,
                                  int32_t *ids, int32_t *ends, Py_ssize_t count) except 255:
        """Append the pre-token's facts; return its junction code (``junction_code``)."""
        cdef Py_ssize_t n = PyUnicode_GET_LENGTH(piece), i, at = 0, word = -1, token = 0, start
        cdef Py_ssize_t last_end = -1  # where the last word ends
        cdef int kind = PyUnicode_KIND(piece)
        cdef const void *data = PyUnicode_DATA(piece)
        cdef const unsigned char *table = &self.classes[0]
        cdef Py_UCS4 c
        cdef int words = 0, whole = 0, multibyte = 0, cut = 0, own = 0, split = 0
        cdef bint first_split = False, lead = False
        for i in range(n + 1):  # word spans in bytes: runs of characters not \s
            c = PyUnicode_READ(kind, data, i) if i < n else 32
            if i < n and not Py_UNICODE_ISSPACE(c):
                own = 1
            if i < n and not table[c] & SPACE:
                if word < 0:
                    word = at
            elif word >= 0:  # a word [word, at): split when a token ends inside it
                while ends[token] <= word:
                    token += 1
                split = ends[token] < at
                if words == 0:
                    lead, first_split = word == 0, split
                words += 1
                whole += not split
                word, last_end = -1, at
            if i < n:
                at += 1 if c < 0x80 else 2 if c < 0x800 else 3 if c < 0x10000 else 4
                multibyte += c >= 0x80
        start = 0
        for i in range(count - 1):  # a token ending inside a character cuts it, once
            if 0x80 <= text[ends[i]] < 0xC0:
                for token in range(start, ends[i]):
                    if not 0x80 <= text[token] < 0xC0:
                        cut += 1
                        break
            start = ends[i]
        cdef bint trail = last_end == size
        cdef int covered = (count == 1 and not self.special.data.as_uchars[ids[0]] and own
                            and gpt2_end(kind, data, 0, n, table) == n)
        cdef int values[FIELDS]
        values[0], values[1], values[2], values[3] = words, whole, multibyte, cut
        values[4], values[5] = own, covered
        array.extend_buffer(self.facts, <char *>values, FIELDS)
        cdef unsigned char code = lead * J_LEAD | trail * J_TRAIL
        if lead and not first_split:
            code |= J_LEAD_ONE
        if trail and not split:
            code |= J_TRAIL_ONE
        if words == 1 and lead and trail and not first_split:
            code |= J_WHOLE
        return code

    cdef Py_ssize_t keep(self, str piece, tuple ids, unsigned char code) except -1:
        cdef Py_ssize_t number = len(self.pretokens)
        cdef long long zero = 0
        array.extend_buffer(self.counts_, <char *>&zero, 1)
        array.extend_buffer(self.word_counts_, <char *>&zero, 1)
        array.extend_buffer(self.codes, <char *>&code, 1)
        self.pretokens.append(piece)
        self.ids.append(ids)
        self.index[piece] = number  # last: a number indexes its arrays only once they hold it
        return number

    def words(self):
        """The words counted (``count_words``) with their counts: ``{word: count}``."""
        found = dict(self.other_words)
        cdef long long *whole = self.word_counts_.data.as_longlongs
        cdef Py_ssize_t number
        for number in range(len(self.pretokens)):
            if whole[number]:
                piece = self.pretokens[number]
                word = piece[1:] if piece[0] == " " else piece
                found[word] = found.get(word, 0) + whole[number]
        return found

    def counts(self):
        """How often each distinct pre-token occurred, in ``pretokens``' order."""
        return self.counts_.tolist()

    def columns(self):
        """Each fact of ``FACT_FIELDS``, one value per distinct pre-token."""
        values = self.facts.tolist()
        return {field: values[i::FIELDS] for i, field in enumerate(FACT_FIELDS)}

    def id_counts(self):
        """Token count per id (``{id: count}``, none zero): each distinct pre-token's ids
        times its count."""
        cdef Py_ssize_t top = len(self.starts) - 1, number = 0, token
        cdef array.array per_id = array.array("q", bytes(8 * top))
        cdef long long *into = per_id.data.as_longlongs
        cdef long long *counts = self.counts_.data.as_longlongs
        cdef tuple ids
        for ids in self.ids:
            for token in ids:
                into[token] += counts[number]
            number += 1
        return {token: into[token] for token in range(top) if into[token]}

    def joins(self):
        return {"joins": self.joins_[0], "joins_ending_one_token": self.joins_[1],
                "joins_starting_one_token": self.joins_[2], "one_token_bridges": self.joins_[3]}
