"""Byte-level BPE training: count pre-tokens, then merge the most frequent pair until done.

Token ids: special tokens first (``0..k-1``, in list order), then the 256 single bytes
(``k..k+255``), then one id per merge in the order learned.
"""

from __future__ import annotations

import heapq
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field

from .corpus import iter_documents, source_size
from .pretokenize import PreTokenizer, check_special_tokens, iter_chunks, special_regex, split_special

Progress = Callable[[str, int, int], None]  # (stage, done, total)
ShouldStop = Callable[[], bool]


class TrainingCancelled(Exception):
    """Raised inside training when ``should_stop()`` answered True."""


@dataclass
class TrainResult:
    vocab: dict[int, bytes]
    merges: list[tuple[bytes, bytes]]
    merge_counts: list[int]
    special_tokens: list[str] = field(default_factory=list)
    pattern: str = "gpt2"

    def tokenizer(self):
        from .tokenizer import Tokenizer

        return Tokenizer(self.vocab, self.merges, self.special_tokens, self.pattern,
                         merge_counts=self.merge_counts)


def train_bpe(source, vocab_size: int, special_tokens=(), pattern: str = "gpt2",
              min_frequency: int = 1, progress: Progress | None = None,
              should_stop: ShouldStop | None = None) -> TrainResult:
    """Train a byte-level BPE tokenizer on a source (see ``corpus.iter_documents``)."""
    special_tokens = check_special_tokens(special_tokens)
    pretokenizer = PreTokenizer(pattern)
    check_vocab_size(vocab_size, len(special_tokens))
    if not isinstance(min_frequency, int) or min_frequency < 1:
        raise ValueError(f"min_frequency must be an integer >= 1, got {min_frequency!r}")
    ticker = Ticker(progress, should_stop)
    word_counts = count_pretokens(source, pretokenizer, special_tokens, ticker)
    if not word_counts:
        raise ValueError("the corpus is empty: it holds no text to train on")
    num_merges = vocab_size - 256 - len(special_tokens)
    merges, counts = learn_merges(word_counts, num_merges, min_frequency, ticker)
    return TrainResult(build_vocab(merges, special_tokens), merges, counts, special_tokens,
                       pretokenizer.pattern)


def check_vocab_size(vocab_size: int, num_special: int) -> None:
    if not isinstance(vocab_size, int) or isinstance(vocab_size, bool):
        raise ValueError(f"vocab_size must be an integer, got {vocab_size!r}")
    if vocab_size < 256 + num_special:
        raise ValueError(f"vocab_size {vocab_size} is below 256 bytes + {num_special} special "
                         f"tokens = {256 + num_special}")


def build_vocab(merges: list[tuple[bytes, bytes]], special_tokens: list[str]) -> dict[int, bytes]:
    """``build_vocab([(b"a", b"b")], ["<s>"]) -> {0: b"<s>", 1: b"\\x00", ..., 257: b"ab"}``"""
    tokens = [t.encode() for t in special_tokens] + [bytes([b]) for b in range(256)]
    tokens += [left + right for left, right in merges]
    return dict(enumerate(tokens))


class Ticker:
    """Calls ``progress`` and ``should_stop`` at most every ``interval`` seconds."""

    def __init__(self, progress: Progress | None, should_stop: ShouldStop | None,
                 interval: float = 0.2):
        self.progress, self.should_stop, self.interval = progress, should_stop, interval
        self.last = float("-inf")

    def __call__(self, stage: str, done: int, total: int, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self.last < self.interval:
            return
        self.last = now
        if self.progress is not None:
            self.progress(stage, done, total)
        if self.should_stop is not None and self.should_stop():
            raise TrainingCancelled(f"training was stopped during {stage}")


def count_pretokens(source, pretokenizer: PreTokenizer, special_tokens: list[str],
                    ticker: Ticker) -> dict[bytes, int]:
    """Count the pre-tokens of a source as UTF-8 bytes; special tokens are cut out and dropped."""
    counts: Counter[str] = Counter()
    total, done = source_size(source), 0
    ticker("count", 0, total, force=True)
    for _name, blocks in iter_documents(source):
        for chunk in iter_chunks(blocks, special_tokens, pretokenizer.line_cuts):
            counts.update(count_chunk(chunk, pretokenizer, special_tokens))
            done += len(chunk.encode())
            ticker("count", done, max(total, done))
    ticker("count", done, max(total, done), force=True)
    return {word.encode(): count for word, count in counts.items()}


def count_chunk(chunk: str, pretokenizer: PreTokenizer, special_tokens: list[str]) -> Counter:
    """``count_chunk("a a<|e|>", PreTokenizer(), ["<|e|>"]) -> Counter({"a": 1, " a": 1})``"""
    counts: Counter[str] = Counter()
    for piece, is_special in split_special(chunk, special_regex(special_tokens)):
        if not is_special:
            counts.update(pretokenizer.split(piece))
    return counts


class _Greatest:
    """Orders byte-string pairs greatest first, so a min-heap pops the tie-break winner."""

    __slots__ = ("key",)

    def __init__(self, key: tuple[bytes, bytes]):
        self.key = key

    def __lt__(self, other: _Greatest) -> bool:
        return self.key > other.key


def tie_break_key(left: bytes, right: bytes) -> tuple[bytes, bytes]:
    """The tie-break rule: among pairs of equal count, the lexicographically greatest pair of
    byte strings ``(left, right)`` wins (``left`` compared first).

    ``max([(b"a", b"b"), (b"b", b"a")], key=lambda p: tie_break_key(*p)) -> (b"b", b"a")``
    """
    return (left, right)


def learn_merges(word_counts: dict[bytes, int], num_merges: int, min_frequency: int = 1,
                 ticker: Ticker | None = None) -> tuple[list[tuple[bytes, bytes]], list[int]]:
    """Learn up to ``num_merges`` merges over weighted words; returns (merges, merge counts)."""
    ticker = ticker or Ticker(None, None)
    tokens = [bytes([b]) for b in range(256)]  # internal id -> bytes
    words = [list(word) for word in word_counts]
    freqs = list(word_counts.values())
    stats, where = _count_pairs(words, freqs)
    heap = [(-count, _Greatest(tie_break_key(tokens[a], tokens[b])), (a, b))
            for (a, b), count in stats.items()]
    heapq.heapify(heap)
    merges: list[tuple[bytes, bytes]] = []
    counts: list[int] = []
    ticker("merge", 0, num_merges, force=True)
    while len(merges) < num_merges:
        # choose the best pair: highest count, then the tie-break
        pair, count = _pop_best(heap, stats)
        if pair is None or count < min_frequency:
            break
        # record the merge as a new token
        left, right = tokens[pair[0]], tokens[pair[1]]
        merges.append((left, right))
        counts.append(count)
        tokens.append(left + right)
        # rewrite the words that contain it, and re-rank the pairs whose counts changed
        for changed in _apply_merge(pair, len(tokens) - 1, words, freqs, stats, where):
            if stats.get(changed, 0) > 0:
                key = _Greatest(tie_break_key(tokens[changed[0]], tokens[changed[1]]))
                heapq.heappush(heap, (-stats[changed], key, changed))
        ticker("merge", len(merges), num_merges)
    ticker("merge", len(merges), len(merges), force=True)  # done, even when it stopped early
    return merges, counts


def _count_pairs(words: list[list[int]], freqs: list[int]):
    """Weighted adjacent-pair counts and, per pair, the indices of the words holding it."""
    stats: dict[tuple[int, int], int] = defaultdict(int)
    where: dict[tuple[int, int], set[int]] = defaultdict(set)
    for index, (word, freq) in enumerate(zip(words, freqs)):
        for pair in zip(word, word[1:]):
            stats[pair] += freq
            where[pair].add(index)
    return stats, where


def _pop_best(heap, stats):
    """Pop heap entries until one matches the current count of its pair (stale ones are lazy)."""
    while heap:
        negative, _key, pair = heapq.heappop(heap)
        if stats.get(pair, 0) == -negative:
            return pair, -negative
    return None, 0


def merge_word(word: list[int], pair: tuple[int, int], new: int) -> list[int]:
    """``merge_word([1, 2, 3, 1, 2], (1, 2), 9) -> [9, 3, 9]``, left to right, no overlaps."""
    out, i, n = [], 0, len(word)
    a, b = pair
    while i < n:
        if i + 1 < n and word[i] == a and word[i + 1] == b:
            out.append(new)
            i += 2
        else:
            out.append(word[i])
            i += 1
    return out


def _apply_merge(pair, new, words, freqs, stats, where) -> set[tuple[int, int]]:
    """Merge ``pair`` into ``new`` in every word holding it; update pair counts and index."""
    changed: set[tuple[int, int]] = set()
    for index in sorted(where.pop(pair, ())):
        word, freq = words[index], freqs[index]
        merged = merge_word(word, pair, new)
        if len(merged) == len(word):
            continue  # a stale index entry: the pair left this word earlier
        for old in zip(word, word[1:]):
            stats[old] -= freq
            changed.add(old)
        for fresh in zip(merged, merged[1:]):
            stats[fresh] += freq
            changed.add(fresh)
            if new in fresh:
                where[fresh].add(index)
        words[index] = merged
    for gone in [p for p in changed if stats[p] <= 0]:
        del stats[gone]
    stats.pop(pair, None)
    return changed
