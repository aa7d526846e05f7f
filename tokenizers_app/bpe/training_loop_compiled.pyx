# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False
"""The merge loop of ``training_loop.learn_merges``, compiled: the same merges and counts, in C.

``training_loop.py`` is the readable reference; this twin keeps its layout (the words as linked
symbols ``sym``/``nxt``/``prv``/``freq``, here one ``Slot`` per position; a list of positions
per pair, stale entries skipped; a lazy max-heap) with C data in place of Python objects:

- a pair ``left << 32 | right`` gets a dense index from an open-addressing hash table while
  the words are counted; its count, its gain during a merge and its positions (a growing ``int``
  array) are kept by index, and each position's ``Slot`` holds the index of the pair that starts
  there (``pidx``), so a merge takes from its neighbours' pairs without looking them up;
- every pair a merge makes holds the merge's new token, so it is new: a merge finds the ones it
  made by their other token (``left_new``, ``right_new``, per token, cleared after the merge),
  and the hash table is freed once the words are counted;
- the heap holds ``(count, pair index)`` entries ordered as ``training_loop`` orders them: higher
  count first, then the lexicographically greater pair of byte strings (``tie_break_key``'s
  rule, here a ``memcmp`` of the tokens' bytes), then the smaller packed pair;
- new pairs go straight into the heap (a push costs little in C, so ``Deferred`` is not needed).

``compiled.py`` chooses between the two; tests/bpe/test_compiled.py checks they agree.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc, realloc
from libc.string cimport memcmp, memset

from .pairs import SHIFT

if SHIFT != 32:  # the C code packs a pair as left << 32 | right, as pairs does
    raise ImportError("pairs.SHIFT is not 32: the compiled loops no longer match pairs.py")
from .training_loop import TICK_EVERY
from .words import FlatWords, is_byte_level, symbol_array, word_lengths_and_counts


def raise_outside(long symbol, Py_ssize_t alphabet_size):
    raise ValueError(f"symbol {symbol} of a word is not an index into the alphabet of "
                     f"{alphabet_size} symbols")

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define BPE_PREFETCH(address) __builtin_prefetch(address)
    #else
    #define BPE_PREFETCH(address) ((void)0)
    #endif
    """
    void BPE_PREFETCH(const void *address) nogil  # a hint only: nothing where no builtin is

cdef Py_ssize_t PREFETCH = 8  # a merge asks for the Slot of the position this far ahead

cdef uint64_t EMPTY = <uint64_t>-1  # no pair packs to this: ids are below 2**31


cdef struct Slot:
    # one position of the laid-out words: its symbol (-1 once merged away), the live positions
    # before and after it in its word (-1 at an end), the index of the pair that starts there,
    # its word's count; kept together, so a merge's visit to a position reads one cache line
    int32_t sym
    int32_t nxt
    int32_t prv
    int32_t pidx
    int64_t freq


cdef struct Entry:
    int64_t count
    int32_t pair


cdef inline void *grow(void *block, Py_ssize_t count, size_t size) except NULL:
    cdef void *out = realloc(block, <size_t>count * size if count else size)
    if out == NULL:
        raise MemoryError("the merge loop ran out of memory")
    return out


cdef class _Loop:
    """The state of one run of the merge loop; its C blocks are freed with it (also when the
    ticker raises to stop training)."""
    cdef Slot *at  # the positions (``Slot``)
    cdef Py_ssize_t size
    # the pair table: slots of packed pairs -> pair index
    cdef uint64_t *slot_keys
    cdef int32_t *slot_index
    cdef Py_ssize_t slots
    # per pair index
    cdef int32_t *left
    cdef int32_t *right
    cdef int64_t *count
    cdef int64_t *gain
    cdef int32_t **positions
    cdef int32_t *used
    cdef int32_t *room
    cdef Py_ssize_t pairs, pair_room
    # the positions of the pairs counted in the words (those below `first_new`), in one block;
    # a pair a merge makes has a block of its own, grown as it gains positions
    cdef int32_t *counted
    cdef Py_ssize_t first_new
    # the heap and the pairs that gained during a merge
    cdef Entry *heap
    cdef Py_ssize_t heap_size, heap_room
    cdef int32_t *fresh
    cdef Py_ssize_t fresh_size, fresh_room
    # the tokens' bytes (kept alive by `tokens`)
    cdef list tokens
    cdef const char **token_data
    cdef Py_ssize_t *token_size
    cdef Py_ssize_t token_room
    # during a merge into token `new`: token x -> the index of pair (x, new), and of (new, x)
    cdef int32_t *left_new
    cdef int32_t *right_new

    def __dealloc__(self):
        cdef Py_ssize_t i
        if self.positions != NULL:
            for i in range(self.first_new, self.pairs):
                free(self.positions[i])
        free(self.counted)
        free(self.at)
        free(self.slot_keys)
        free(self.slot_index)
        free(self.left)
        free(self.right)
        free(self.count)
        free(self.gain)
        free(self.positions)
        free(self.used)
        free(self.room)
        free(self.heap)
        free(self.fresh)
        free(<void *>self.token_data)
        free(self.token_size)
        free(self.left_new)
        free(self.right_new)

    # -- the tokens --------------------------------------------------------------------------

    cdef int add_token(self, bytes token) except -1:
        cdef Py_ssize_t n = len(self.tokens)
        if n == self.token_room:
            self.token_room = 2 * n + 1024
            self.token_data = <const char **>grow(self.token_data, self.token_room,
                                                  sizeof(char *))
            self.token_size = <Py_ssize_t *>grow(self.token_size, self.token_room,
                                                 sizeof(Py_ssize_t))
            self.left_new = <int32_t *>grow(self.left_new, self.token_room, sizeof(int32_t))
            self.right_new = <int32_t *>grow(self.right_new, self.token_room, sizeof(int32_t))
            memset(self.left_new + n, 0xFF, (self.token_room - n) * sizeof(int32_t))
            memset(self.right_new + n, 0xFF, (self.token_room - n) * sizeof(int32_t))
        self.tokens.append(token)
        self.token_data[n] = PyBytes_AS_STRING(token)
        self.token_size[n] = PyBytes_GET_SIZE(token)
        return 0

    cdef inline int compare_tokens(self, int32_t x, int32_t y) noexcept:
        """<0, 0, >0 as the bytes of token ``x`` are below, equal to, above those of ``y``."""
        cdef Py_ssize_t nx = self.token_size[x], ny = self.token_size[y]
        cdef int c = memcmp(self.token_data[x], self.token_data[y], nx if nx < ny else ny)
        if c:
            return c
        return (nx > ny) - (nx < ny)

    # -- the pair table ----------------------------------------------------------------------

    cdef int32_t pair_index(self, int32_t a, int32_t b) except -1:
        """The index of pair ``(a, b)``, made (count 0, no positions) when it is new."""
        cdef uint64_t key = (<uint64_t>a) << 32 | <uint32_t>b
        cdef Py_ssize_t mask = self.slots - 1
        cdef Py_ssize_t s = <Py_ssize_t>((key * <uint64_t>0x9E3779B97F4A7C15) >> 32) & mask
        while self.slot_keys[s] != EMPTY:
            if self.slot_keys[s] == key:
                return self.slot_index[s]
            s = (s + 1) & mask
        if 2 * (self.pairs + 1) > self.slots:
            self.rehash(2 * self.slots)
            return self.pair_index(a, b)
        cdef int32_t i = self.new_pair(a, b)
        self.slot_keys[s] = key
        self.slot_index[s] = i
        return i

    cdef int32_t new_pair(self, int32_t a, int32_t b) except -1:
        """A new index for pair ``(a, b)`` (count 0, no positions), not in the hash table."""
        if self.pairs == self.pair_room:
            self.grow_pairs()
        cdef int32_t i = <int32_t>self.pairs
        self.pairs += 1
        self.left[i], self.right[i] = a, b
        self.count[i] = self.gain[i] = 0
        self.positions[i] = NULL
        self.used[i] = self.room[i] = 0
        return i

    cdef int rehash(self, Py_ssize_t slots) except -1:
        cdef uint64_t *keys = self.slot_keys
        cdef int32_t *index = self.slot_index
        cdef Py_ssize_t old = self.slots, s, t, mask = slots - 1
        self.slot_keys = <uint64_t *>malloc(slots * sizeof(uint64_t))
        self.slot_index = <int32_t *>malloc(slots * sizeof(int32_t))
        if self.slot_keys == NULL or self.slot_index == NULL:
            free(keys)
            free(index)
            raise MemoryError("the merge loop ran out of memory")
        memset(self.slot_keys, 0xFF, slots * sizeof(uint64_t))
        self.slots = slots
        for s in range(old):
            if keys[s] != EMPTY:
                t = <Py_ssize_t>((keys[s] * <uint64_t>0x9E3779B97F4A7C15) >> 32) & mask
                while self.slot_keys[t] != EMPTY:
                    t = (t + 1) & mask
                self.slot_keys[t] = keys[s]
                self.slot_index[t] = index[s]
        free(keys)
        free(index)
        return 0

    cdef int grow_pairs(self) except -1:
        cdef Py_ssize_t n = 2 * self.pair_room + 4096
        self.left = <int32_t *>grow(self.left, n, sizeof(int32_t))
        self.right = <int32_t *>grow(self.right, n, sizeof(int32_t))
        self.count = <int64_t *>grow(self.count, n, sizeof(int64_t))
        self.gain = <int64_t *>grow(self.gain, n, sizeof(int64_t))
        self.positions = <int32_t **>grow(self.positions, n, sizeof(int32_t *))
        self.used = <int32_t *>grow(self.used, n, sizeof(int32_t))
        self.room = <int32_t *>grow(self.room, n, sizeof(int32_t))
        self.pair_room = n
        return 0

    cdef inline int add_position(self, int32_t i, int32_t p) except -1:
        """Append position ``p`` to the positions of pair ``i``, a pair a merge made (those
        counted in the words have theirs in ``counted``, and never gain one)."""
        if self.used[i] == self.room[i]:
            if i < self.first_new:
                raise RuntimeError("the merge loop gave a counted pair a new position")
            self.room[i] = 2 * self.room[i] + 2
            self.positions[i] = <int32_t *>grow(self.positions[i], self.room[i],
                                                sizeof(int32_t))
        self.positions[i][self.used[i]] = p
        self.used[i] += 1
        return 0

    # -- the words ---------------------------------------------------------------------------

    cdef int build(self, word_counts, Py_ssize_t alphabet_size, tick) except -1:
        """Lay the words out, count their pairs and index where each starts. Byte-level words
        are widened to symbols by ``symbol_array``; tuples of indices and ``FlatWords`` are
        copied here, each symbol checked to be below ``alphabet_size``, with no array of them
        built first."""
        cdef bint flat = isinstance(word_counts, FlatWords)
        cdef bint spelled = is_byte_level(word_counts)
        cdef Py_ssize_t size, p = 0, w
        cdef const int32_t[:] lengths
        if flat:
            _, counts = word_lengths_and_counts(word_counts)  # checks that the parts agree
            lengths = word_counts.lengths
            size = len(word_counts.symbols)
        else:
            size = sum(map(len, word_counts))
        self.size = size
        self.at = <Slot *>grow(NULL, size, sizeof(Slot))
        if spelled:
            self.copy_symbols(symbol_array(word_counts, alphabet_size), 0, alphabet_size)
        elif flat:
            self.copy_symbols(word_counts.symbols, 0, alphabet_size)
        if flat:
            for w in range(lengths.shape[0]):
                if not w % TICK_EVERY:
                    tick()
                self.link(p, lengths[w], counts[w])
                p += lengths[w]
            return self.count_pairs(tick)
        for index, (word, count) in enumerate(word_counts.items()):
            if not index % TICK_EVERY:
                tick()
            if not spelled:
                self.copy_symbols(word, p, alphabet_size)
            self.link(p, len(word), count)
            p += len(word)
        return self.count_pairs(tick)

    cdef int copy_symbols(self, symbols, Py_ssize_t p, Py_ssize_t alphabet_size) except -1:
        """Copy ``symbols`` (an ``array("i")``, or a tuple of ints) to ``sym[p:]``, each checked
        to index the alphabet."""
        cdef const int32_t[:] view
        cdef long symbol
        cdef Py_ssize_t q
        if isinstance(symbols, tuple):
            for item in <tuple>symbols:
                symbol = item
                if not 0 <= symbol < alphabet_size:
                    raise_outside(symbol, alphabet_size)
                self.at[p].sym = <int32_t>symbol
                p += 1
            return 0
        view = symbols
        for q in range(view.shape[0]):
            if not 0 <= view[q] < alphabet_size:
                raise_outside(view[q], alphabet_size)
            self.at[p + q].sym = view[q]
        return 0

    cdef inline void link(self, Py_ssize_t p, Py_ssize_t length, int64_t weight) noexcept:
        """Link the ``length`` symbols of one word, from ``p``, and give each its count."""
        cdef Py_ssize_t q
        if length == 0:
            return
        for q in range(p, p + length):
            self.at[q].nxt = q + 1
            self.at[q].prv = q - 1
            self.at[q].freq = weight
        self.at[p + length - 1].nxt = -1
        self.at[p].prv = -1

    cdef int count_pairs(self, tick) except -1:
        """Count every pair of the laid-out words and index where each starts; then free the
        hash table (a merge makes new pairs only). The first pass finds each position's pair and
        counts its occurrences, so the second lays out every pair's positions one after another
        in ``counted`` (read by the merge of the pair, never grown: only new pairs gain
        positions)."""
        cdef Py_ssize_t p, q, size = self.size
        cdef int32_t i
        for p in range(size):
            if not p % TICK_EVERY:
                tick()
            q = self.at[p].nxt
            if q >= 0:
                i = self.pair_index(self.at[p].sym, self.at[q].sym)
                self.count[i] += self.at[p].freq
                self.used[i] += 1
                self.at[p].pidx = i
        cdef Py_ssize_t total = 0
        self.counted = <int32_t *>grow(NULL, size, sizeof(int32_t))
        for i in range(<int32_t>self.pairs):
            self.positions[i] = self.counted + total
            total += self.used[i]
            self.room[i] = self.used[i]
            self.used[i] = 0
        self.first_new = self.pairs
        for p in range(size):
            if self.at[p].nxt >= 0:
                i = self.at[p].pidx
                self.positions[i][self.used[i]] = <int32_t>p
                self.used[i] += 1
        free(self.slot_keys)
        free(self.slot_index)
        self.slot_keys = NULL
        self.slot_index = NULL
        return 0

    cdef int merge(self, int32_t merged, int32_t new) except -1:
        """Merge every live occurrence of pair ``merged`` into token ``new``, left to right;
        update counts and positions; push the new pairs that gained. As in
        ``MergeState.merge``, gains are added at the end. The neighbours' old pairs are
        ``pidx``'s; a new pair ``(x, new)`` is found by ``left_new[x]``, ``(new, y)`` by
        ``right_new[y]`` (``(new, new)`` by ``left_new[new]``)."""
        cdef int32_t a = self.left[merged], b = self.right[merged]
        cdef int32_t *where = self.positions[merged]
        cdef Py_ssize_t n = self.used[merged], k
        cdef int32_t p, q, left, right, i, x
        cdef int64_t f
        cdef Slot *at = self.at
        cdef int32_t *left_new = self.left_new
        cdef int32_t *right_new = self.right_new
        self.positions[merged] = NULL
        self.used[merged] = self.room[merged] = 0
        self.fresh_size = 0
        try:
            for k in range(n):
                if k + PREFETCH < n:  # the positions come in increasing order, with gaps
                    BPE_PREFETCH(&at[where[k + PREFETCH]])
                p = where[k]
                q = at[p].nxt
                if at[p].sym != a or q < 0 or at[q].sym != b:
                    continue  # stale: this occurrence was merged or rewritten earlier
                f = at[p].freq
                left = at[p].prv
                right = at[q].nxt
                if left >= 0:
                    self.count[at[left].pidx] -= f  # (sym[left], a)
                    x = at[left].sym
                    i = left_new[x]
                    if i < 0:
                        i = left_new[x] = self.new_pair(x, new)
                    self.add_gain(i, f)
                    self.add_position(i, left)
                    at[left].pidx = i
                if right >= 0:
                    self.count[at[q].pidx] -= f  # (b, sym[right])
                    x = at[right].sym
                    if x == new:  # (new, new): one index, kept in left_new
                        i = left_new[x]
                        if i < 0:
                            i = left_new[x] = self.new_pair(new, new)
                    else:
                        i = right_new[x]
                        if i < 0:
                            i = right_new[x] = self.new_pair(new, x)
                    self.add_gain(i, f)
                    self.add_position(i, p)
                    at[p].pidx = i
                    at[right].prv = p
                at[p].sym = new
                at[q].sym = -1
                at[p].nxt = right
        finally:
            if merged >= self.first_new:
                free(where)
        for k in range(self.fresh_size):
            i = self.fresh[k]
            self.count[i] += self.gain[i]
            self.gain[i] = 0
            if self.right[i] == new:
                left_new[self.left[i]] = -1
            else:
                right_new[self.right[i]] = -1
        self.count[merged] = 0
        for k in range(self.fresh_size):
            i = self.fresh[k]
            if self.count[i] > 0:
                self.push(self.count[i], i)
        return 0

    cdef inline int add_gain(self, int32_t i, int64_t f) except -1:
        if self.gain[i] == 0:
            if self.fresh_size == self.fresh_room:
                self.fresh_room = 2 * self.fresh_room + 256
                self.fresh = <int32_t *>grow(self.fresh, self.fresh_room, sizeof(int32_t))
            self.fresh[self.fresh_size] = i
            self.fresh_size += 1
        self.gain[i] += f
        return 0

    # -- the heap ----------------------------------------------------------------------------

    cdef inline bint above(self, Entry x, Entry y) noexcept:
        """Whether ``x`` comes out of the heap before ``y``: the higher count, then the greater
        pair of byte strings (left first), then the smaller packed pair."""
        if x.count != y.count:
            return x.count > y.count
        cdef int c = self.compare_tokens(self.left[x.pair], self.left[y.pair])
        if c == 0:
            c = self.compare_tokens(self.right[x.pair], self.right[y.pair])
        if c:
            return c > 0
        if self.left[x.pair] != self.left[y.pair]:
            return self.left[x.pair] < self.left[y.pair]
        return self.right[x.pair] < self.right[y.pair]

    cdef int push(self, int64_t count, int32_t pair) except -1:
        cdef Entry entry
        entry.count, entry.pair = count, pair
        if self.heap_size == self.heap_room:
            self.heap_room = 2 * self.heap_room + 4096
            self.heap = <Entry *>grow(self.heap, self.heap_room, sizeof(Entry))
        cdef Py_ssize_t i = self.heap_size, parent
        self.heap_size += 1
        while i > 0:
            parent = (i - 1) >> 1
            if not self.above(entry, self.heap[parent]):
                break
            self.heap[i] = self.heap[parent]
            i = parent
        self.heap[i] = entry
        return 0

    cdef Entry pop(self) noexcept:
        cdef Entry top = self.heap[0]
        self.heap_size -= 1
        cdef Entry last = self.heap[self.heap_size]
        cdef Py_ssize_t i = 0, child, n = self.heap_size
        while True:
            child = 2 * i + 1
            if child >= n:
                break
            if child + 1 < n and self.above(self.heap[child + 1], self.heap[child]):
                child += 1
            if not self.above(self.heap[child], last):
                break
            self.heap[i] = self.heap[child]
            i = child
        if n:
            self.heap[i] = last
        return top

    cdef int32_t pop_best(self) except -2:
        """Pop until an entry holds its pair's current count (-1: none is left). An entry above
        the current count is pushed back with it; one below it is stale."""
        cdef Entry entry
        cdef int64_t current
        while self.heap_size:
            entry = self.pop()
            current = self.count[entry.pair]
            if current == entry.count:
                return entry.pair
            if 0 < current < entry.count:
                self.push(current, entry.pair)
        return -1


def learn_merges(word_counts, Py_ssize_t num_merges, min_frequency=1, ticker=None,
                 alphabet=None, skip_known=False):
    """``training_loop.learn_merges``, compiled: (merges, merge counts), the same to the byte."""
    cdef _Loop loop = _Loop()
    loop.tokens = []
    for token in (list(alphabet) if alphabet is not None else [bytes([b]) for b in range(256)]):
        loop.add_token(bytes(token))
    loop.slots = 1 << 16
    loop.slot_keys = <uint64_t *>grow(NULL, loop.slots, sizeof(uint64_t))
    loop.slot_index = <int32_t *>grow(NULL, loop.slots, sizeof(int32_t))
    memset(loop.slot_keys, 0xFF, loop.slots * sizeof(uint64_t))
    loop.grow_pairs()
    if ticker:
        ticker("merge", 0, num_merges, force=True)
    tick = (lambda: ticker("merge", 0, num_merges)) if ticker else (lambda: None)
    if word_counts:
        loop.build(word_counts, len(loop.tokens), tick)
    cdef Py_ssize_t i
    for i in range(loop.pairs):  # count pairs: every pair seen, into the heap
        if loop.count[i] > 0:
            loop.push(loop.count[i], <int32_t>i)
    merges, counts = [], []
    known = set(loop.tokens) if skip_known else None
    cdef int32_t best
    cdef int64_t count, floor = min_frequency
    while len(merges) < num_merges:
        # choose the best pair: highest count, then the tie-break
        best = loop.pop_best()
        if best < 0:
            break
        count = loop.count[best]
        if count < floor:
            break
        left, right = loop.tokens[loop.left[best]], loop.tokens[loop.right[best]]
        if known is not None:
            if left + right in known:  # already a token: never learned (see skip_known)
                loop.count[best] = 0
                continue
            known.add(left + right)
        # record the merge as a new token
        merges.append((left, right))
        counts.append(count)
        loop.add_token(left + right)
        # rewrite the words that hold it
        loop.merge(best, <int32_t>(len(loop.tokens) - 1))
        if ticker:
            ticker("merge", len(merges), num_merges)
    if ticker:
        ticker("merge", len(merges), len(merges), force=True)
    return merges, counts
