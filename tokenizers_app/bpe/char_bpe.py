"""Character-level BPE with an end-of-word marker (the classic subword-nmt variant).

A word is its characters with the suffix glued to the last one: ``"low" -> ["l", "o", "w</w>"]``,
so ``"w"`` and ``"w</w>"`` are two symbols. Words come from a split (``whitespace`` or
``word_punct``), optionally lowercased. The alphabet is the symbols seen in training; a symbol
outside it encodes to ``<unk>``. Merges never cross words; the tie-break is byte-level BPE's
(``training.tie_break_key``) on the symbols' UTF-8 bytes.

Token ids: special tokens first (in list order, ``<unk>`` among them), then the alphabet sorted
by UTF-8 bytes, then one id per merge in the order learned.
"""

from __future__ import annotations

import heapq
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import regex

from .corpus import iter_documents, source_size
from .pretokenize import check_special_tokens, iter_chunks, special_regex, split_special
from .training import Progress, ShouldStop, Ticker, merge_word, tie_break_key

UNK = "<unk>"
SPLITS = {"whitespace": r"\S+", "word_punct": r"\w+|[^\w\s]+"}  # \s is Unicode White_Space
_NO_RANK = 1 << 62


def split_regex(split: str) -> regex.Pattern:
    """The word regex of a split name: ``split_regex("word_punct").findall("hi, you") ->
    ["hi", ",", "you"]``."""
    if split not in SPLITS:
        raise ValueError(f"split must be 'whitespace' or 'word_punct', got {split!r}")
    return regex.compile(SPLITS[split])


def word_symbols(word: str, suffix: str = "</w>") -> list[str]:
    """``word_symbols("low") -> ["l", "o", "w</w>"]``"""
    return [*word[:-1], word[-1] + suffix]


@dataclass
class CharTrainResult:
    vocab: dict[int, str]
    merges: list[tuple[str, str]]
    merge_counts: list[int]
    special_tokens: list[str] = field(default_factory=lambda: [UNK])
    end_of_word_suffix: str = "</w>"
    lowercase: bool = False
    split: str = "whitespace"

    def tokenizer(self) -> CharBPETokenizer:
        return CharBPETokenizer(self.vocab, self.merges, self.special_tokens, UNK,
                                self.end_of_word_suffix, self.lowercase, self.split,
                                self.merge_counts)


def train_char_bpe(source, vocab_size: int, special_tokens=(UNK,), lowercase: bool = False,
                   split: str = "whitespace", min_word_frequency: int = 1,
                   min_frequency: int = 1, end_of_word_suffix: str = "</w>",
                   progress: Progress | None = None,
                   should_stop: ShouldStop | None = None) -> CharTrainResult:
    """Train character-level BPE on a source (see ``corpus.iter_documents``).

    The whole alphabet is always kept: a ``vocab_size`` below special tokens + alphabet gives a
    vocab of exactly those, with no merge (as Hugging Face's trainer does).
    """
    special_tokens = _check_options(special_tokens, vocab_size, min_word_frequency,
                                    min_frequency, end_of_word_suffix)
    ticker = Ticker(progress, should_stop)
    counts = count_words(source, split_regex(split), lowercase, special_tokens, ticker)
    if not counts:
        raise ValueError("the corpus is empty: it holds no word to train on")
    words = {w: c for w, c in counts.items() if c >= min_word_frequency}
    if not words:
        raise ValueError(f"no word occurs min_word_frequency={min_word_frequency} times")
    alphabet, word_counts = spell_words(words, end_of_word_suffix)
    num_merges = max(0, vocab_size - len(special_tokens) - len(alphabet))
    merges, merge_counts = learn_symbol_merges(word_counts, [s.encode() for s in alphabet],
                                               num_merges, min_frequency, ticker)
    merges = [(left.decode(), right.decode()) for left, right in merges]
    tokens = [*special_tokens, *alphabet, *(left + right for left, right in merges)]
    return CharTrainResult(dict(enumerate(tokens)), merges, merge_counts, special_tokens,
                           end_of_word_suffix, lowercase, split)


def spell_words(words: dict[str, int], suffix: str = "</w>"):
    """The alphabet (sorted by UTF-8 bytes) and the words spelled as indices into it:
    ``spell_words({"ab": 2, "b": 1}) -> (["a", "b</w>"], {(0, 1): 2, (1,): 1})``."""
    spelled = {word: word_symbols(word, suffix) for word in words}
    alphabet = sorted({s for symbols in spelled.values() for s in symbols}, key=str.encode)
    index = {symbol: i for i, symbol in enumerate(alphabet)}
    return alphabet, {tuple(index[s] for s in spelled[w]): c for w, c in words.items()}


def _check_options(special_tokens, vocab_size, min_word_frequency, min_frequency, suffix):
    special_tokens = check_special_tokens(special_tokens)
    if UNK not in special_tokens:
        raise ValueError(f"special tokens {special_tokens!r} must include {UNK!r}")
    for name, value in [("vocab_size", vocab_size), ("min_frequency", min_frequency),
                        ("min_word_frequency", min_word_frequency)]:
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    if not isinstance(suffix, str) or not suffix:
        raise ValueError(f"end_of_word_suffix must be a non-empty string, got {suffix!r}")
    return special_tokens


def count_words(source, word_re: regex.Pattern, lowercase: bool, special_tokens: list[str],
                ticker: Ticker) -> Counter[str]:
    """Count the words of a source; special tokens are cut out and dropped.

    ``count_words(["Hi hi <unk>"], split_regex("whitespace"), True, ["<unk>"], ticker) ->
    Counter({"hi": 2})``
    """
    counts: Counter[str] = Counter()
    special = special_regex(special_tokens)
    total, done = source_size(source), 0
    ticker("count", 0, total, force=True)
    for _name, blocks in iter_documents(source):
        for chunk in iter_chunks(blocks, special_tokens, line_cuts=True):  # cuts at whitespace
            for piece, is_special in split_special(chunk, special):
                if not is_special:
                    words = word_re.findall(piece)
                    counts.update([w.lower() for w in words] if lowercase else words)
            done += len(chunk.encode())
            ticker("count", done, max(total, done))
    ticker("count", done, max(total, done), force=True)
    return counts


class _Greatest:
    """Orders pairs of UTF-8 symbols greatest ``tie_break_key`` first, for a min-heap."""

    __slots__ = ("key",)

    def __init__(self, left: bytes, right: bytes):
        self.key = tie_break_key(left, right)

    def __lt__(self, other: _Greatest) -> bool:
        return self.key > other.key


def learn_symbol_merges(word_counts: dict[tuple[int, ...], int], alphabet: list[bytes],
                        num_merges: int, min_frequency: int = 1, ticker: Ticker | None = None,
                        ) -> tuple[list[tuple[bytes, bytes]], list[int]]:
    """Learn merges over words spelled as indices into ``alphabet`` (the symbols' UTF-8).

    ``learn_symbol_merges({(0, 0, 1): 2}, [b"a", b"a</w>"], 5) ->
    ([(b"a", b"a</w>"), (b"a", b"aa</w>")], [2, 2])`` (a tie: ``b"a</w>" > b"a"``)
    """
    ticker = ticker or Ticker(None, None)
    tokens, words = list(alphabet), [list(word) for word in word_counts]
    freqs = list(word_counts.values())
    stats: Counter[tuple[int, int]] = Counter()
    where: dict[tuple[int, int], set[int]] = defaultdict(set)
    changed = _count_word_pairs(words, freqs, range(len(words)), 1, stats, where)
    heap = [(-stats[p], _Greatest(tokens[p[0]], tokens[p[1]]), p) for p in changed]
    heapq.heapify(heap)
    merges, counts = [], []
    ticker("merge", 0, num_merges, force=True)
    while len(merges) < num_merges:
        # choose the best pair: highest count, then the tie-break
        pair, count = _pop_best(heap, stats)
        if pair is None or count < min_frequency:
            break
        # record the merge as a new token
        merges.append((tokens[pair[0]], tokens[pair[1]]))
        counts.append(count)
        tokens.append(tokens[pair[0]] + tokens[pair[1]])
        # rewrite the words that hold it, and re-rank the pairs whose counts changed
        holders = where.pop(pair)
        changed = _count_word_pairs(words, freqs, holders, -1, stats, where)
        for index in holders:
            words[index] = merge_word(words[index], pair, len(tokens) - 1)
        changed |= _count_word_pairs(words, freqs, holders, 1, stats, where)
        for p in changed:
            if stats[p] > 0:
                heapq.heappush(heap, (-stats[p], _Greatest(tokens[p[0]], tokens[p[1]]), p))
        ticker("merge", len(merges), num_merges)
    ticker("merge", len(merges), len(merges), force=True)
    return merges, counts


def _count_word_pairs(words, freqs, indices, sign, stats, where) -> set[tuple[int, int]]:
    """Add (``sign=1``) or remove (``-1``) the weighted pairs of some words; index new ones."""
    changed = set()
    for index in indices:
        word, freq = words[index], freqs[index] * sign
        for pair in zip(word, word[1:]):
            stats[pair] += freq
            changed.add(pair)
            if sign > 0:
                where[pair].add(index)
    return changed


def _pop_best(heap, stats):
    """Pop heap entries until one holds its pair's current count (older ones are stale)."""
    while heap:
        negative, _key, pair = heapq.heappop(heap)
        if stats.get(pair, 0) == -negative:
            return pair, -negative
    return None, 0


class CharBPETokenizer:
    """A character-level BPE tokenizer; ``vocab: dict[int, str]``, ``merges: list[tuple[str,
    str]]`` in rank order, ``special_tokens`` found in ``vocab`` by text (``unk_token`` among
    them).

    ``t.encode_ordinary("lower")`` spells ``["low", "er</w>"]`` when those merges exist;
    ``t.decode(t.encode_ordinary("a  b"))  -> "a b"``.
    """

    algorithm = "char_bpe"

    def __init__(self, vocab: dict[int, str], merges: list[tuple[str, str]],
                 special_tokens: list[str], unk_token: str = UNK,
                 end_of_word_suffix: str = "</w>", lowercase: bool = False,
                 split: str = "whitespace", merge_counts: list[int] | None = None):
        self.vocab = dict(vocab)
        self.merges = [(str(left), str(right)) for left, right in merges]
        self.merge_counts = list(merge_counts) if merge_counts is not None else None
        self.suffix, self.lowercase, self.unk_token = end_of_word_suffix, lowercase, unk_token
        self.word_re, self.pattern = split_regex(split), split
        self.special_tokens = check_special_tokens(special_tokens)
        by_text = {text: i for i, text in sorted(self.vocab.items(), reverse=True)}  # lowest id
        for token in [*self.special_tokens, unk_token]:
            if token not in by_text or token not in self.special_tokens:
                raise ValueError(f"{token!r} must be a special token and in the vocab")
        self.special_ids = {t: by_text[t] for t in self.special_tokens}
        self.unk_id = self.special_ids[unk_token]
        self._ids = {text: i for i, text in sorted(self.vocab.items(), reverse=True)
                     if i not in self.special_ids.values()}
        self._ranks, self._merged = self._rank_table()
        self._cache: dict[str, tuple[int, ...]] = {}

    def _rank_table(self):
        """``(left id, right id) -> rank`` and ``rank -> merged id``."""
        ranks, merged = {}, []
        for rank, (left, right) in enumerate(self.merges):
            missing = [t for t in (left, right, left + right) if t not in self._ids]
            if missing:
                raise ValueError(f"merge {rank} ({left!r}, {right!r}): {missing[0]!r} is not "
                                 f"in the vocab")
            ranks.setdefault((self._ids[left], self._ids[right]), rank)
            merged.append(self._ids[left + right])
        return ranks, merged

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def token_bytes(self, token_id: int) -> bytes:
        """The UTF-8 of the token's text, suffix included: ``b"w</w>"``."""
        if token_id not in self.vocab:
            raise ValueError(f"token id {token_id!r} is not in the vocab")
        return self.vocab[token_id].encode()

    def split_words(self, text: str) -> list[str]:
        """``split_words("hi, you")`` -> ``["hi,", "you"]`` (whitespace) or ``["hi", ",",
        "you"]`` (word_punct); not lowercased."""
        return self.word_re.findall(text)

    def encode_ordinary(self, text: str) -> list[int]:
        """Encode text, treating special-token text as plain text."""
        ids: list[int] = []
        for word in self.word_re.findall(text):
            ids.extend(self._encode_word(word))
        return ids

    def encode(self, text: str, allowed_special=frozenset(), disallowed_special="all") -> list[int]:
        """As ``Tokenizer.encode``: allowed special tokens become their ids; text of a
        disallowed one (default: every one not allowed) raises ``ValueError``."""
        ids: list[int] = []
        for piece, is_special in self._pieces(text, allowed_special, disallowed_special):
            ids.extend([self.special_ids[piece]] if is_special else self.encode_ordinary(piece))
        return ids

    def _pieces(self, text: str, allowed_special, disallowed_special):
        specials = self.special_tokens
        allowed = specials if allowed_special == "all" else [
            t for t in specials if t in set(allowed_special)]
        disallowed = [t for t in specials if t not in allowed] if disallowed_special == "all" \
            else list(disallowed_special)
        found = special_regex(disallowed).search(text) if disallowed else None
        if found:
            raise ValueError(f"text holds the special token {found.group()!r}, which is not "
                             f"allowed; pass allowed_special={{{found.group()!r}}} or "
                             f"disallowed_special=() to encode it as plain text")
        return split_special(text, special_regex(allowed))

    def _encode_word(self, word: str) -> tuple[int, ...]:
        ids = self._cache.get(word)
        if ids is None:
            ids = tuple(self.bpe(word.lower() if self.lowercase else word))
            if len(self._cache) >= 1 << 16:
                self._cache.clear()
            self._cache[word] = ids
        return ids

    def bpe(self, word: str) -> list[int]:
        """Apply merges to one word, lowest rank first, until none applies."""
        ids = [self._ids.get(s, self.unk_id) for s in word_symbols(word, self.suffix)]
        while len(ids) > 1:
            pair = min(zip(ids, ids[1:]), key=lambda p: self._ranks.get(p, _NO_RANK))
            if pair not in self._ranks:
                break
            ids = merge_word(ids, pair, self._merged[self._ranks[pair]])
        return ids

    def unknown_count(self, text: str) -> int:
        """Characters of ``text`` mapped to ``<unk>`` (one ``<unk>`` per character)."""
        return self.encode_ordinary(text).count(self.unk_id)

    def decode(self, ids) -> str:
        """Token texts joined, each suffix turned into a space, the final one dropped:
        ``"lo" "w</w>" "er</w>" -> "low er"``."""
        texts = [self.token_bytes(i).decode() for i in ids]
        text = "".join(t[:-len(self.suffix)] + " " if t.endswith(self.suffix) else t
                       for t in texts)
        return text[:-1] if texts and texts[-1].endswith(self.suffix) else text

    def decode_bytes(self, ids) -> bytes:
        return self.decode(ids).encode()

    def token_spans(self, text: str, allowed_special="all") -> list[tuple[int, int, int]]:
        """``(token id, start byte, end byte)`` in ``text``: a token spans the characters it
        stands for (``<unk>`` one character); whitespace belongs to no token."""
        spans, offset = [], 0
        for piece, is_special in self._pieces(text, allowed_special, ()):
            if is_special:
                spans.append((self.special_ids[piece], offset, offset + len(piece.encode())))
            else:
                spans.extend(self._piece_spans(piece, offset))
            offset += len(piece.encode())
        return spans

    def _piece_spans(self, piece: str, offset: int) -> list[tuple[int, int, int]]:
        spans, chars = [], 0  # offset is the byte offset of character ``chars`` of the piece
        for match in self.word_re.finditer(piece):
            offset += len(piece[chars:match.start()].encode())
            chars = match.start()
            spans.extend(self._word_spans(match.group(), offset))
        return spans

    def _word_spans(self, word: str, offset: int) -> list[tuple[int, int, int]]:
        """The spans of one word's tokens. Where lowercasing changed the word's length they
        are clamped to it, and the last one ends at the word's end."""
        spans, chars = [], 0
        for token_id in self._encode_word(word):
            text = self.vocab[token_id].removesuffix(self.suffix)
            begin, chars = chars, chars + (1 if token_id == self.unk_id else len(text))
            spans.append((token_id, offset + len(word[:begin].encode()),
                          offset + len(word[:chars].encode())))
        spans[-1] = (spans[-1][0], spans[-1][1], offset + len(word.encode()))
        return spans

    def __repr__(self) -> str:
        return (f"CharBPETokenizer(vocab_size={self.vocab_size}, merges={len(self.merges)}, "
                f"split={self.pattern!r}, lowercase={self.lowercase})")
