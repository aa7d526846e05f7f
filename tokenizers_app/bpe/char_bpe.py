"""Character-level BPE training with an end-of-word marker (the classic subword-nmt variant).

Words are spelled as in ``char_tokenizer`` (``"low" -> ["l", "o", "w</w>"]``). The alphabet is the
symbols seen in training; merges never cross words; the merge loop is byte-level BPE's
(``training_loop.learn_merges``), whose tie-break (``training_loop.tie_break_key``) compares the
symbols' UTF-8 bytes.

Token ids: special tokens first (in list order, ``<unk>`` among them), then the alphabet sorted
by UTF-8 bytes, then one id per merge in the order learned.

Its plain twin, which the tests compare it with: ``reference_train_char`` in
``tests/bpe/reference.py``.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field

import regex

from ..errors import Invalid
from .char_tokenizer import SPLITS, UNK, CharBPETokenizer, split_regex, word_symbols
from .corpus import StrictUtf8, iter_documents, source_size
from .counting import (
    add_counts,
    check_weights,
    default_workers,
    ranges_of,
    is_large_file,
    parallel_range_bytes,
    plan_ranges,
    pooled_parts,
    scaled,
    weight_of,
)
from .parameters import TrainingParameters, check_training_parameters
from .pretokenize import iter_chunks
from .compiled import learn_merges
from .special_tokens import special_regex, split_special
from .training import (
    MAX_PRETOKEN_BYTES,
    CountProgress,
    Progress,
    ShouldStop,
    Ticker,
    stop_reason,
)

__all__ = ["SPLITS", "UNK", "CharBPETokenizer", "CharTrainResult", "count_words",
           "count_words_range", "prefix_char_tokenizer", "spell_words", "split_regex",
           "train_char_bpe", "train_char_from_counts", "word_symbols"]

BLOCK_CHARS = 1 << 16  # a range's text is counted in chunks of about this many characters


@dataclass
class CharTrainResult:
    vocab: dict[int, str]
    merges: list[tuple[str, str]]
    merge_counts: list[int]
    special_tokens: list[str] = field(default_factory=lambda: [UNK])
    end_of_word_suffix: str = "</w>"
    lowercase: bool = False
    split: str = "whitespace"
    stop_reason: str = ""  # why training made fewer merges than asked ("" when it did not)

    def tokenizer(self) -> CharBPETokenizer:
        return CharBPETokenizer(self.vocab, self.merges, self.special_tokens, UNK,
                                self.end_of_word_suffix, self.lowercase, self.split,
                                self.merge_counts)


def train_char_bpe(source, vocab_size: int, special_tokens=(UNK,), lowercase: bool = False,
                   split: str = "whitespace", min_word_frequency: int = 1,
                   min_frequency: int = 1, end_of_word_suffix: str = "</w>",
                   progress: Progress | None = None,
                   should_stop: ShouldStop | None = None,
                   max_word_bytes: int | None = None, weights=None) -> CharTrainResult:
    """Train character-level BPE on a source (see ``corpus.iter_documents``): the parameters
    are checked here, once (``check_training_parameters``), then ``train_chars``.

    ``weights``: one whole number per document (default: 1 each), multiplying its word counts
    before merging (``counting.scaled``).

    The whole alphabet is always kept: a ``vocab_size`` below special tokens + alphabet gives a
    vocab of exactly those, with no merge (as Hugging Face's trainer does).
    ``max_word_bytes``: the longest word merged, in UTF-8 bytes (default ``MAX_PRETOKEN_BYTES``,
    byte-level BPE's bound for its pre-tokens).
    """
    params = _check_options(special_tokens, vocab_size, lowercase, split, min_word_frequency,
                            min_frequency, end_of_word_suffix)
    return train_chars(source, params, end_of_word_suffix=end_of_word_suffix, progress=progress,
                       should_stop=should_stop, max_word_bytes=max_word_bytes, weights=weights)


def train_chars(source, params: TrainingParameters, *, end_of_word_suffix: str = "</w>",
                progress: Progress | None = None, should_stop: ShouldStop | None = None,
                max_word_bytes: int | None = None, weights=None) -> CharTrainResult:
    """Train character-level BPE with checked parameters, taken whole (nothing is checked
    again): count the source's words, then ``merge_chars``."""
    ticker = Ticker(progress, should_stop)
    counts = count_words(source, split_regex(params.split), params.lowercase,
                         params.special_tokens, ticker, weights=check_weights(weights))
    return merge_chars(counts, params, end_of_word_suffix=end_of_word_suffix, progress=progress,
                       should_stop=should_stop, max_word_bytes=max_word_bytes)


def train_char_from_counts(counts: dict[str, int], vocab_size: int, special_tokens=(UNK,),
                           lowercase: bool = False, split: str = "whitespace",
                           min_word_frequency: int = 1, min_frequency: int = 1,
                           end_of_word_suffix: str = "</w>", progress: Progress | None = None,
                           should_stop: ShouldStop | None = None,
                           max_word_bytes: int | None = None) -> CharTrainResult:
    """The end of training, from counted words (already lowercased when ``lowercase``): the
    parameters are checked here, once, then ``merge_chars``.

    ``train_char_from_counts({"ab": 3}, 4).merges -> [("a", "b</w>")]``
    """
    params = _check_options(special_tokens, vocab_size, lowercase, split, min_word_frequency,
                            min_frequency, end_of_word_suffix)
    return merge_chars(counts, params, end_of_word_suffix=end_of_word_suffix, progress=progress,
                       should_stop=should_stop, max_word_bytes=max_word_bytes)


def merge_chars(counts: dict[str, int], params: TrainingParameters, *,
                end_of_word_suffix: str = "</w>", progress: Progress | None = None,
                should_stop: ShouldStop | None = None,
                max_word_bytes: int | None = None) -> CharTrainResult:
    """Drop the rare words, learn the merges and build the vocab, with checked parameters
    taken whole: ``train_chars`` ends here, and so does a count fanned out to several workers
    (``count_words_range`` per part)."""
    special_tokens, min_word_frequency = params.special_tokens, params.min_word_frequency
    if not counts:
        raise ValueError("the corpus is empty: it holds no word to train on")
    words = {w: c for w, c in counts.items() if c >= min_word_frequency}
    if not words:
        raise ValueError(f"no word occurs min_word_frequency={min_word_frequency} times: "
                         f"lower it, or train on more text")
    check_word_sizes(words, params.split, max_word_bytes or MAX_PRETOKEN_BYTES)
    alphabet, word_counts = spell_words(words, end_of_word_suffix)
    num_merges = max(0, params.vocab_size - len(special_tokens) - len(alphabet))
    merges, merge_counts = learn_merges(word_counts, num_merges, params.min_frequency,
                                        Ticker(progress, should_stop),
                                        alphabet=[s.encode() for s in alphabet])
    merges = [(left.decode(), right.decode()) for left, right in merges]
    tokens = [*special_tokens, *alphabet, *(left + right for left, right in merges)]
    return CharTrainResult(dict(enumerate(tokens)), merges, merge_counts, special_tokens,
                           end_of_word_suffix, params.lowercase, params.split,
                           stop_reason(len(merges), num_merges, params.min_frequency))


def check_word_sizes(words: dict[str, int], split: str, limit: int = MAX_PRETOKEN_BYTES) -> None:
    """Refuse words over ``limit`` UTF-8 bytes (one huge run of text without a space, say),
    whose merging would take memory without bound (about 110 bytes per byte of the word).

    ``check_word_sizes({"ab": 1}, "whitespace", 1)`` raises "the corpus holds a word of 2
    bytes, over the limit of 1 (MAX_PRETOKEN_BYTES): ..."."""
    longest = max((len(w.encode()) for w in words if len(w) * 4 > limit), default=0)
    if longest > limit:
        what = ("split 'whitespace' makes every run of text without a space one word"
                if split == "whitespace" else
                f"split {split!r} makes every run of letters and digits, or of punctuation, "
                f"one word")
        raise ValueError(f"the corpus holds a word of {longest:,} bytes, over the limit of "
                         f"{limit:,} (MAX_PRETOKEN_BYTES): {what}; break the text")


def prefix_char_tokenizer(tokenizer: CharBPETokenizer, vocab_size: int) -> CharBPETokenizer:
    """The tokenizer of a trained one's first merges, what training to ``vocab_size`` gives:
    ids below ``vocab_size`` (special tokens, the whole alphabet, then merges in order); the
    alphabet is always kept, as training keeps it."""
    merged = {left + right for left, right in tokenizer.merges}
    specials = set(tokenizer.special_ids.values())
    base = sum(1 for i, t in tokenizer.vocab.items() if i in specials or t not in merged)
    if list(tokenizer.vocab) != list(range(len(tokenizer.vocab))) or \
            base + len(tokenizer.merges) != len(tokenizer.vocab):
        raise ValueError("a sweep needs a trained tokenizer (ids: special tokens, alphabet, "
                         "merges)")
    keep = max(0, vocab_size - base)
    counts = tokenizer.merge_counts[:keep] if tokenizer.merge_counts else None
    return CharBPETokenizer({i: t for i, t in tokenizer.vocab.items() if i < base + keep},
                            tokenizer.merges[:keep], tokenizer.special_tokens,
                            tokenizer.unk_token, tokenizer.suffix, tokenizer.lowercase,
                            tokenizer.pattern, counts)


def spell_words(words: dict[str, int], suffix: str = "</w>"):
    """The alphabet (sorted by UTF-8 bytes) and the words spelled as indices into it:
    ``spell_words({"ab": 2, "b": 1}) -> (["a", "b</w>"], {(0, 1): 2, (1,): 1})``."""
    spelled = {word: word_symbols(word, suffix) for word in words}
    alphabet = sorted({s for symbols in spelled.values() for s in symbols}, key=str.encode)
    index = {symbol: i for i, symbol in enumerate(alphabet)}
    return alphabet, {tuple(index[s] for s in spelled[w]): c for w, c in words.items()}


def _check_options(special_tokens, vocab_size, lowercase, split, min_word_frequency,
                   min_frequency, suffix) -> TrainingParameters:
    params = check_training_parameters(
        algorithm="char_bpe", vocab_size=vocab_size, special_tokens=list(special_tokens),
        lowercase=lowercase, split=split, min_word_frequency=min_word_frequency,
        min_frequency=min_frequency)
    if not isinstance(suffix, str) or not suffix:
        raise Invalid(f"end_of_word_suffix must be a non-empty string, got {suffix!r}",
                      field="end_of_word_suffix")
    return params


def count_words_range(path, start: int, end: int, split: str, lowercase: bool,
                      special_tokens: list[str], tick=None) -> Counter[str]:
    """Count the words of bytes ``[start, end)`` of a UTF-8 file (a path or a range reader,
    see ``counting.FileRanges``), as ``count_words`` counts a
    whole source; ``counting.plan_ranges`` cuts ranges after a newline or a special token, so no
    word spans two ranges and the parts' counts add up to the whole file's. ``tick(characters
    done, characters in all)`` is called after each chunk."""
    source = ranges_of(path)  # a path, or a range reader of a stored object
    text = StrictUtf8(f"corpus file {source.name!r}", start).decode(source.read(start, end),
                                                                    final=True)
    counts: Counter[str] = Counter()
    word_re, special = split_regex(split), special_regex(special_tokens)
    blocks = (text[i:i + BLOCK_CHARS] for i in range(0, len(text), BLOCK_CHARS))
    done = 0
    for chunk in iter_chunks(blocks, special_tokens, line_cuts=True):
        _count_chunk(counts, chunk, word_re, special, lowercase)
        done += len(chunk)
        if tick is not None:
            tick(done, len(text))
    return counts


def _count_chunk(counts: Counter, chunk: str, word_re, special, lowercase: bool) -> None:
    for segment, is_special in split_special(chunk, special):
        if not is_special:
            words = word_re.findall(segment)
            counts.update([w.lower() for w in words] if lowercase else words)


def count_words(source, word_re: regex.Pattern, lowercase: bool, special_tokens: list[str],
                ticker: Ticker, workers: int | None = None,
                weights: list[int] | None = None) -> Counter[str]:
    """Count the words of a source; special tokens are cut out and dropped; ``weights``: one
    per document, multiplying its counts (``None``: 1 each). A file of more than
    two ranges is counted in ``workers`` processes (default: all cores), as byte-level BPE
    counts its pre-tokens (``counting.count_file_parallel``).

    ``count_words(["Hi hi <unk>"], split_regex("whitespace"), True, ["<unk>"], ticker) ->
    Counter({"hi": 2})``
    """
    counts: Counter[str] = Counter()
    special = special_regex(special_tokens)
    progress = CountProgress(ticker, source_size(source))
    workers = workers or default_workers()
    documents = 0
    for index, (path, blocks) in enumerate(iter_documents(source)):
        weight, documents = weight_of(weights, index), index + 1
        if workers > 1 and is_large_file(path):
            add_counts(counts, scaled(count_file_words_parallel(
                path, _split_name(word_re), lowercase, special_tokens, workers, progress.add),
                weight))
            continue
        document = counts if weight == 1 else Counter()
        for chunk in iter_chunks(blocks, special_tokens, line_cuts=True):  # cuts at whitespace
            _count_chunk(document, chunk, word_re, special, lowercase)
            progress.add(len(chunk.encode()))
        if document is not counts:
            add_counts(counts, scaled(document, weight))
    check_weights(weights, documents)
    progress.add(force=True)
    return counts


def _split_name(word_re: regex.Pattern) -> str:
    return next(name for name, pattern in SPLITS.items() if pattern == word_re.pattern)


def _count_words_job(job) -> tuple[int, dict[str, int]]:
    path, start, end, split, lowercase, special_tokens = job
    return end - start, dict(count_words_range(path, start, end, split, lowercase,
                                               special_tokens))


def count_file_words_parallel(path, split: str, lowercase: bool, special_tokens: list[str],
                              workers: int, on_range=None) -> Counter[str]:
    """The words of a file counted over byte ranges (cut as ``counting.plan_ranges`` cuts them:
    no word spans two) in ``workers`` processes. ``on_range(bytes)`` is called after each range,
    and with 0 at least every ``counting.WAIT_SECONDS`` while waiting; it may raise to stop."""
    jobs = [(os.fspath(path), a, b, split, lowercase, special_tokens)
            for a, b in plan_ranges(path, "gpt2", special_tokens,
                                    parallel_range_bytes(path, workers))]
    counts: Counter[str] = Counter()
    for part in pooled_parts(_count_words_job, jobs, workers, on_range):
        add_counts(counts, part)
    return counts
