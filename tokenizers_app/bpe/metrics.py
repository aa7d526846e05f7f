"""The metric definitions: one function per metric, each with its unit (see the README's
"Metrics" list). ``evaluation.evaluate`` computes them over a text.

Units: compression ratio in UTF-8 bytes per token, chars per token in characters (code points)
per token, tokens per word in tokens per whitespace-separated word, throughput in MB (10^6 bytes
of UTF-8) per second of ``encode_ordinary``; every rate is a share in [0, 1]. A ratio over zero
items is 0.0, except the byte-fallback rate of a text without multi-byte characters, which is
undefined (None, shown "n/a"): no character there could be spelled by bytes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from .baselines import WORD_RE

Span = tuple[int, int]  # (start byte, end byte)

# every metric of ``metrics_of``: name -> (label, unit, True if higher is better); "%" units are
# shares in [0, 1] shown as percentages
METRICS = {
    "compression_ratio": ("Compression ratio", "bytes/token", True),
    "chars_per_token": ("Characters per token", "chars/token", True),
    "tokens_per_word": ("Tokens per word", "tokens/word", False),
    "word_split_rate": ("Word split rate", "%", False),
    "word_coverage": ("Word coverage", "%", True),
    "word_coverage_distinct": ("Word coverage, distinct words", "%", True),
    "vocabulary_utilization": ("Vocabulary utilization", "%", True),
    "byte_fallback_rate": ("Byte-fallback rate", "%", False),
    "unknown_rate": ("Unknown rate", "%", False),
    "lossless_rate": ("Lossless rate", "%", True),
    "renyi_efficiency": ("Rényi efficiency (α 2.5)", "", True),
    "encode_throughput_mb_s": ("Encode throughput", "MB/s", True),
}
# what each metric of ``METRICS`` counts and how it is computed, for people (the glossary at
# ``/metrics/`` and the links beside every metric's label); unit and direction are ``METRICS``'s
DEFINITIONS = {
    "compression_ratio": ("UTF-8 bytes of the corpus per token.",
                          "total UTF-8 bytes / total tokens of encode_ordinary, each document "
                          "encoded whole."),
    "chars_per_token": ("Characters (Unicode code points) per token.",
                        "total characters / total tokens."),
    "tokens_per_word": ("Tokens per whitespace-separated word (fertility).",
                        "total tokens / words, a word being a run of non-space characters."),
    "word_split_rate": ("Share of word occurrences cut into two or more tokens.",
                        "words whose bytes touch 2+ tokens / words (whitespace-separated)."),
    "word_coverage": ("Share of word occurrences that are one token.",
                      "words (as the tokenizer's own pattern pre-tokenizes the text) encoded as "
                      "a single token / those words."),
    "word_coverage_distinct": ("Word coverage over distinct words, each counted once.",
                               "distinct words that are one token / distinct words."),
    "vocabulary_utilization": ("Share of the vocabulary the corpus uses.",
                               "distinct non-special token ids seen / non-special vocab size."),
    "byte_fallback_rate": ("Share of multi-byte characters spelled by byte pieces rather than "
                           "by a token of their own (byte-level BPE).",
                           "multi-byte characters a token boundary cuts through / multi-byte "
                           "characters; n/a on a text without any."),
    "unknown_rate": ("Share of characters that end up inside an unknown token (<unk>, [UNK]).",
                     "characters inside unknown tokens / characters."),
    "lossless_rate": ("Share of documents that decode back to exactly their text.",
                      "documents (lines) with decode(encode(x)) == x / documents."),
    "renyi_efficiency": ("How evenly the corpus uses the vocabulary: 1 = every token equally "
                         "often.",
                         "Rényi entropy of order 2.5 of the token frequencies / log of the "
                         "non-special vocab size."),
    "encode_throughput_mb_s": ("How fast encode_ordinary ran during the evaluation: a timing, "
                               "not a score (never marked best: it varies between runs).",
                               "MB (10^6 bytes) of UTF-8 encoded / seconds spent encoding."),
}
# the few metrics that answer "which tokenizer?" at a glance: the leaderboard's columns, the
# admin's evaluation columns, ``manage.py show`` and the compare page's charts
HEADLINE_METRICS = ("compression_ratio", "word_coverage", "tokens_per_word",
                    "vocabulary_utilization")

# measured, not counted: two runs of one version differ, so no value of these is ever "best"
TIMING_METRICS = frozenset({"encode_throughput_mb_s"})

BYTE_LEVEL = frozenset({"byte_bpe", "byte"})  # these report byte_fallback_rate, not unknown_rate
RENYI_ALPHA = 2.5


def best_value(name: str, values: Iterable[float | None]) -> float | None:
    """The best of the known values by the metric's direction (``METRICS``), or None when fewer
    than two are known (nothing to choose between) or the metric is a timing (``TIMING_METRICS``:
    noise, not a score): ``best_value("tokens_per_word", [1.4, None, 1.2]) -> 1.2``;
    ``best_value("compression_ratio", [3.1, None]) -> None``."""
    known = [value for value in values if value is not None]
    if len(known) < 2 or name in TIMING_METRICS:
        return None
    return max(known) if METRICS[name][2] else min(known)


def share(part: float, whole: float) -> float:
    """``share(1, 4) -> 0.25``; ``share(3, 0) -> 0.0``."""
    return part / whole if whole else 0.0


def compression_ratio(num_bytes: int, num_tokens: int) -> float:
    """UTF-8 bytes per token (higher is better): ``compression_ratio(num_bytes=10,
    num_tokens=4) -> 2.5``."""
    return share(num_bytes, num_tokens)


def chars_per_token(num_chars: int, num_tokens: int) -> float:
    """Characters per token: ``chars_per_token(num_chars=6, num_tokens=4) -> 1.5``."""
    return share(num_chars, num_tokens)


def tokens_per_word(num_tokens: int, num_words: int) -> float:
    """Fertility, tokens per whitespace-separated word: ``tokens_per_word(num_tokens=5,
    num_words=2) -> 2.5``."""
    return share(num_tokens, num_words)


def vocabulary_utilization(num_used: int, vocab_size: int) -> float:
    """Distinct non-special ids used / non-special vocab size: ``vocabulary_utilization(64,
    256) -> 0.25``."""
    return share(num_used, vocab_size)


def encode_throughput_mb_s(num_bytes: int, seconds: float) -> float:
    """MB (10^6 bytes) encoded per second: ``encode_throughput_mb_s(3_000_000, 1.5) -> 2.0``."""
    return share(num_bytes / 1e6, seconds)


def word_spans(line: str) -> list[Span]:
    """Byte spans of the whitespace-separated words: ``word_spans("ab  é") -> [(0, 2), (4, 6)]``.
    """
    spans, chars, offset = [], 0, 0
    for match in WORD_RE.finditer(line):
        offset += len(line[chars:match.start()].encode())
        chars = match.start()
        spans.append((offset, offset + len(match.group().encode())))
    return spans


def split_flags(words: list[Span], tokens: list[Span]) -> list[bool]:
    """Whether each word's bytes intersect 2+ token spans (both lists sorted; a token may cover
    whitespace and several words): ``split_flags([(0, 5), (6, 11)], [(0, 3), (3, 5), (5, 11)])
    -> [True, False]`` (the token ``" world"`` touches only the second word's bytes)."""
    flags, first = [], 0
    for start, end in words:
        while first < len(tokens) and tokens[first][1] <= start:
            first += 1
        touching, index = 0, first
        while index < len(tokens) and tokens[index][0] < end and touching < 2:
            touching, index = touching + 1, index + 1
        flags.append(touching >= 2)
    return flags


def count_split_words(words: list[Span], tokens: list[Span]) -> int:
    """Words cut into 2+ tokens (see ``split_flags``): ``count_split_words([(0, 5), (6, 11)],
    [(0, 3), (3, 5), (5, 11)]) -> 1``."""
    return sum(split_flags(words, tokens))


def count_cut_characters(line: str, boundaries: set[int]) -> tuple[int, int]:
    """``(multi-byte characters, those a token boundary cuts through)``, boundaries as byte
    offsets: ``count_cut_characters("aé€", {0, 1, 3, 5, 6}) -> (2, 1)`` (``€`` is bytes 3-5,
    cut at 5)."""
    if line.isascii():
        return 0, 0
    multibyte, cut, offset = 0, 0, 0
    for char in line:
        size = len(char.encode())
        if size > 1:
            multibyte += 1
            cut += any(offset + i in boundaries for i in range(1, size))
        offset += size
    return multibyte, cut


def renyi_efficiency(counts: Iterable[int], vocab_size: int, alpha: float = RENYI_ALPHA) -> float:
    """Rényi entropy of order ``alpha`` of the token distribution over the log of the vocab size
    (natural logs; 1.0 = uniform over the whole vocab): ``renyi_efficiency([1, 1],
    vocab_size=4) -> 0.5`` (H = log 2, normalized by log 4). The sum is exact (``math.fsum``),
    so the order of the counts does not matter."""
    counts = [c for c in counts if c > 0]
    total = sum(counts)
    if not total or vocab_size < 2:
        return 0.0
    power_sum = math.fsum((c / total) ** alpha for c in counts)
    return max(0.0, math.log(power_sum) / (1 - alpha) / math.log(vocab_size))  # no -0.0


def metrics_of(tokenizer, totals: dict[str, int], id_counts: dict[int, int],
               seconds: float) -> dict:
    """The metrics dict from an evaluation's totals (see ``totals.Totals``): ``totals`` holds
    bytes, chars, tokens, words, lines, split_words, own_words, covered_words, lossless_lines,
    distinct_own_words, distinct_covered_words, and cut_chars and multibyte_chars (byte-level)
    or unknown_chars."""
    t, special_ids = totals, set(tokenizer.special_ids.values())
    used = [i for i in id_counts if i not in special_ids]
    ordinary_size = tokenizer.vocab_size - len(special_ids)
    rate = ({"byte_fallback_rate": share(t["cut_chars"], t["multibyte_chars"])
             if t["multibyte_chars"] else None}
            if tokenizer.algorithm in BYTE_LEVEL
            else {"unknown_rate": share(t["unknown_chars"], t["chars"])})
    return {
        "compression_ratio": compression_ratio(t["bytes"], t["tokens"]),
        "chars_per_token": chars_per_token(t["chars"], t["tokens"]),
        "tokens_per_word": tokens_per_word(t["tokens"], t["words"]),
        "word_split_rate": share(t["split_words"], t["words"]),
        "word_coverage": share(t["covered_words"], t["own_words"]),
        "word_coverage_distinct": share(t["distinct_covered_words"], t["distinct_own_words"]),
        "vocabulary_utilization": vocabulary_utilization(len(used), ordinary_size),
        **rate,
        "lossless_rate": share(t["lossless_lines"], t["lines"]),
        "renyi_efficiency": renyi_efficiency([id_counts[i] for i in used], ordinary_size),
        "encode_throughput_mb_s": encode_throughput_mb_s(t["bytes"], seconds),
        **{key: t[key] for key in ("bytes", "chars", "tokens", "words", "lines")},
    }
