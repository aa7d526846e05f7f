"""Byte-level BPE training: count pre-tokens, then merge the most frequent pair until done.

Token ids: special tokens first (``0..k-1``, in list order), then the 256 single bytes
(``k..k+255``), then one id per merge in the order learned.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from .corpus import iter_documents, source_size
from .counting import (
    add_counts,
    check_weights,
    count_chunk,
    count_file_parallel,
    default_workers,
    is_large_file,
    scaled,
    summed,
    weight_of,
)
from .parameters import TrainingParameters, check_training_parameters
from .pretokenize import PreTokenizer, iter_chunks
from .tokenizer import Tokenizer
from .compiled import learn_merges

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
    stop_reason: str = ""  # why training made fewer merges than asked ("" when it did not)

    def tokenizer(self) -> Tokenizer:
        return Tokenizer(self.vocab, self.merges, self.special_tokens, self.pattern,
                         merge_counts=self.merge_counts)


def train_bpe(source, vocab_size: int, special_tokens=(), pattern: str = "gpt2",
              min_frequency: int = 1, progress: Progress | None = None,
              should_stop: ShouldStop | None = None, workers: int | None = None,
              max_pretoken_bytes: int | None = None, weights=None) -> TrainResult:
    """Train a byte-level BPE tokenizer on a source (see ``corpus.iter_documents``): the
    parameters are checked here, once (``check_training_parameters``), then ``train_bytes``.

    ``weights``: one whole number per document of the source (default: 1 each), multiplying
    its pre-token counts before merging (``counting.scaled``).

    ``workers``: processes for counting large files (default: all cores; 1 counts in-process).
    ``max_pretoken_bytes``: the longest pre-token merged (default ``MAX_PRETOKEN_BYTES``).
    """
    params = check_training_parameters(vocab_size=vocab_size, special_tokens=special_tokens,
                                       pattern=pattern, min_frequency=min_frequency)
    return train_bytes(source, params, progress=progress, should_stop=should_stop,
                       workers=workers, max_pretoken_bytes=max_pretoken_bytes, weights=weights)


def train_bytes(source, params: TrainingParameters, *, progress: Progress | None = None,
                should_stop: ShouldStop | None = None, workers: int | None = None,
                max_pretoken_bytes: int | None = None, weights=None) -> TrainResult:
    """Train byte-level BPE with checked parameters, taken whole (nothing is checked again):
    count the source's pre-tokens, then ``merge_bytes``."""
    word_counts = count_pretokens(source, PreTokenizer(params.pattern), params.special_tokens,
                                  Ticker(progress, should_stop), workers, check_weights(weights))
    return merge_bytes(word_counts, params, progress=progress, should_stop=should_stop,
                       max_pretoken_bytes=max_pretoken_bytes)


def train_from_counts(word_counts: dict[bytes, int], vocab_size: int, special_tokens=(),
                      pattern: str = "gpt2", min_frequency: int = 1,
                      progress: Progress | None = None, should_stop: ShouldStop | None = None,
                      max_pretoken_bytes: int | None = None) -> TrainResult:
    """The end of training, from counted pre-tokens (UTF-8 bytes -> count): the parameters are
    checked here, once, then ``merge_bytes``.

    ``train_from_counts({b"ab": 3}, 257) -> TrainResult(vocab={..., 256: b"ab"},
    merges=[(b"a", b"b")], merge_counts=[3], special_tokens=[], pattern="gpt2")``
    """
    params = check_training_parameters(vocab_size=vocab_size, special_tokens=special_tokens,
                                       pattern=pattern, min_frequency=min_frequency)
    return merge_bytes(word_counts, params, progress=progress, should_stop=should_stop,
                       max_pretoken_bytes=max_pretoken_bytes)


def merge_bytes(word_counts: dict[bytes, int], params: TrainingParameters, *,
                progress: Progress | None = None, should_stop: ShouldStop | None = None,
                max_pretoken_bytes: int | None = None) -> TrainResult:
    """Learn the merges of counted pre-tokens and build the vocab, with checked parameters
    taken whole: ``train_bytes`` ends here, and so does a count fanned out to several
    workers."""
    specials = params.special_tokens
    check_pretoken_sizes(word_counts, params.pattern, max_pretoken_bytes or MAX_PRETOKEN_BYTES)
    num_merges = params.vocab_size - 256 - len(specials)
    merges, counts = learn_merges(word_counts, num_merges, params.min_frequency,
                                  Ticker(progress, should_stop))
    return TrainResult(build_vocab(merges, specials), merges, counts, specials, params.pattern,
                       stop_reason=stop_reason(len(merges), num_merges, params.min_frequency))


def stop_reason(made: int, asked: int, min_frequency: int) -> str:
    """Why the merge loop made fewer merges than asked: it stops early only when no pair is
    left with count >= ``min_frequency``. ``stop_reason(3, 5, 2) -> "no pair left with count >=
    2 after 3 of 5 merges"``; ``stop_reason(5, 5, 2) -> ""``."""
    if made >= asked:
        return ""
    return f"no pair left with count >= {min_frequency} after {made:,} of {asked:,} merges"


MAX_PRETOKEN_BYTES = 8 << 20  # merging holds about 45 bytes per byte of a pre-token


def check_pretoken_sizes(word_counts: dict[bytes, int], pattern: str,
                         limit: int = MAX_PRETOKEN_BYTES) -> None:
    """Refuse counts that are empty or hold a pre-token over ``limit`` bytes (pattern ``none``
    on a huge line, say), whose merging would take memory without bound."""
    if not word_counts:
        raise ValueError("the corpus is empty: it holds no text to train on")
    longest = max(map(len, word_counts))
    if longest > limit:
        why = ("pattern 'none' makes the text between special tokens one pre-token; use a "
               "pattern that splits it (gpt2, gpt4)" if pattern == "none" else
               f"pattern {pattern!r} leaves a run of text without a break as one pre-token; "
               f"break the text")
        raise ValueError(f"the corpus holds a pre-token of {longest:,} bytes, over the limit of "
                         f"{limit:,} (MAX_PRETOKEN_BYTES): {why}")


def build_vocab(merges: list[tuple[bytes, bytes]], special_tokens: list[str]) -> dict[int, bytes]:
    """``build_vocab([(b"a", b"b")], ["<s>"]) -> {0: b"<s>", 1: b"\\x00", ..., 257: b"ab"}``"""
    tokens = [t.encode() for t in special_tokens] + [bytes([b]) for b in range(256)]
    tokens += [left + right for left, right in merges]
    return dict(enumerate(tokens))


def has_standard_layout(tokenizer: Tokenizer) -> bool:
    """Whether the ids are special tokens (in order), the 256 bytes, then one per merge: the
    layout of every trained tokenizer, whose vocab ``build_vocab`` derives from its merges."""
    return (list(tokenizer.special_ids.values()) == list(range(len(tokenizer.special_ids)))
            and tokenizer.vocab == build_vocab(tokenizer.merges, tokenizer.special_tokens))


def prefix_tokenizer(tokenizer: Tokenizer, vocab_size: int) -> Tokenizer:
    """The tokenizer of the first ``vocab_size - 256 - k`` merges of a trained tokenizer (ids:
    special tokens, bytes, merges), which is what training to that vocab size gives."""
    if not has_standard_layout(tokenizer):
        raise ValueError("a sweep needs a trained tokenizer (ids: special tokens, bytes, merges)")
    specials = tokenizer.special_tokens
    merges = tokenizer.merges[:vocab_size - 256 - len(specials)]
    counts = tokenizer.merge_counts[:len(merges)] if tokenizer.merge_counts else None
    return Tokenizer(build_vocab(merges, specials), merges, specials, tokenizer.pattern,
                     merge_counts=counts)


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


class CountProgress:
    """The bytes of a source counted so far, told to ``ticker`` as the count stage's progress
    (from 0, forced, when made)."""

    def __init__(self, ticker: Ticker, total: int):
        self.ticker, self.total, self.done = ticker, total, 0
        ticker("count", 0, total, force=True)

    def add(self, size: int = 0, force: bool = False) -> None:
        self.done += size
        self.ticker("count", self.done, max(self.total, self.done), force=force)


def count_pretokens(source, pretokenizer: PreTokenizer, special_tokens: list[str],
                    ticker: Ticker, workers: int | None = None,
                    weights: list[int] | None = None) -> dict[bytes, int]:
    """Count the pre-tokens of a source as UTF-8 bytes; special tokens are cut out and dropped.
    ``weights``: one per document, multiplying its counts (``None``: 1 each).

    Files of more than two ranges are counted in ``workers`` processes (default: all cores)."""
    counts: Counter[str] = Counter()
    byte_counts: dict[bytes, int] = {}  # from the files counted in parallel
    progress = CountProgress(ticker, source_size(source))
    workers = workers or default_workers()
    documents = 0
    for index, (path, blocks) in enumerate(iter_documents(source)):
        weight, documents = weight_of(weights, index), index + 1
        if workers > 1 and is_large_file(path):
            byte_counts = summed(byte_counts, scaled(count_file_parallel(
                path, pretokenizer.pattern, special_tokens, workers, progress.add), weight))
            continue
        document = counts if weight == 1 else Counter()
        for chunk in iter_chunks(blocks, special_tokens, pretokenizer.line_cuts):
            add_counts(document, count_chunk(chunk, pretokenizer, special_tokens, progress.add))
            progress.add(len(chunk.encode()))
        if document is not counts:
            add_counts(counts, scaled(document, weight))
    check_weights(weights, documents)
    progress.add(force=True)
    if not counts:
        return byte_counts
    word_counts = dict(zip(map(str.encode, counts), counts.values()))
    add_counts(word_counts, byte_counts)
    return word_counts
