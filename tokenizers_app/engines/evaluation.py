"""Evaluating any kind of tokenizer: the core's ``evaluate`` for its own kinds; for an engine,
the document encoded whole, in one call into its library, and the metrics counted from its
tokens' byte spans.

The definitions are ``bpe.metrics``'s. Where a kind changes a number's meaning:

- words for word coverage are the whitespace-separated words (a word is covered when
  ``encode_ordinary(word)`` is one token that is not special);
- the unknown rate is reported when the tokenizer has an unknown token: the characters inside
  the spans of its ``<unk>`` / ``[UNK]`` tokens (WordPiece's ``[UNK]`` spans a whole word);
- the byte-fallback rate is reported when it has ``<0xNN>`` pieces: the characters they spell;
- the lossless rate is per line, without its line end, ``decode(encode_ordinary(line)) ==
  line``: a lowercasing or normalising tokenizer (BERT's) is lossy.
"""

from __future__ import annotations

import time
from collections import Counter
from operator import itemgetter
from collections.abc import Iterable

from ..bpe import evaluation as core_evaluation
from ..bpe.baselines import WORD_RE, whitespace_words
from ..bpe.evaluation import LineCounter
from ..bpe.metrics import metrics_of, share, word_spans
from ..bpe.totals import line_text


def evaluate(tokenizer, blocks: Iterable[str]) -> dict:
    """All metrics of ``tokenizer`` over the document ``"".join(blocks)``."""
    if not hasattr(tokenizer, "canonical"):  # one of the core's own kinds
        return core_evaluation.evaluate(tokenizer, blocks)
    lines = list(LineCounter(blocks))
    text = "".join(lines)
    started = time.perf_counter()
    spans = tokenizer.token_spans(text, ())
    seconds = time.perf_counter() - started
    data = text.encode()
    ids = list(map(itemgetter(0), spans))
    words = _word_spans(lines)
    totals = Counter(bytes=len(data), chars=len(text), tokens=len(ids), lines=len(lines),
                     words=len(words), split_words=_count_split_words(words, spans))
    del words
    totals.update(_word_coverage(tokenizer, text))
    totals["lossless_lines"] = _lossless_lines(tokenizer, lines)
    unknown_id, byte_ids = tokenizer.unk_id, tokenizer.byte_ids
    totals["unknown_chars"] = _chars_in(data, spans, lambda i: i == unknown_id)
    metrics = metrics_of(tokenizer, totals, Counter(ids), seconds)
    if unknown_id is None:
        del metrics["unknown_rate"]
    if byte_ids:
        metrics["byte_fallback_rate"] = share(_chars_in(data, spans, byte_ids.__contains__),
                                              len(text))
    return metrics


def _count_split_words(words: list[tuple[int, int]], spans: list[tuple[int, int, int]]) -> int:
    """Words whose bytes touch 2+ tokens: ``metrics.split_flags`` over ``(id, start, end)``
    spans, counted: ``_count_split_words([(0, 5)], [(1, 0, 3), (2, 3, 5)]) -> 1``."""
    split, first = 0, 0
    for start, end in words:
        while first < len(spans) and spans[first][2] <= start:
            first += 1
        split += (first + 1 < len(spans) and spans[first][1] < end
                  and spans[first + 1][1] < end)
    return split


def _word_spans(lines: list[str]) -> list[tuple[int, int]]:
    """``metrics.word_spans`` of the whole text, line by line (a line ends in whitespace, so no
    word crosses lines); an ASCII line's character offsets are its byte offsets."""
    spans: list[tuple[int, int]] = []
    offset = 0
    for line in lines:
        if line.isascii():
            spans += [(offset + start, offset + end)
                      for start, end in map(_span, WORD_RE.finditer(line))]
            offset += len(line)
        else:
            spans += [(offset + start, offset + end) for start, end in word_spans(line)]
            offset += len(line.encode())
    return spans


def _span(match) -> tuple[int, int]:
    return match.span()


def _word_coverage(tokenizer, text: str) -> dict[str, int]:
    """Whitespace-separated words, all and distinct, and those that are one token."""
    counts = Counter(whitespace_words(text))
    words = list(counts)
    special = set(tokenizer.special_ids.values())
    one_token = [len(ids) == 1 and ids[0] not in special
                 for ids in tokenizer.encode_ordinary_batch(words)] if words else []
    return {"own_words": sum(counts.values()),
            "covered_words": sum(c for c, one in zip(counts.values(), one_token) if one),
            "distinct_own_words": len(words), "distinct_covered_words": sum(one_token)}


def _lossless_lines(tokenizer, lines: list[str]) -> int:
    """Lines that decode back to themselves, each without its line end (every SentencePiece
    normalizer drops a newline, which would make every line lossy):
    ``line_text("a b\r\n") -> "a b"``."""
    bare = list(map(line_text, lines))
    decoded = tokenizer.decode_batch(tokenizer.encode_ordinary_batch(bare)) if bare else []
    return sum(map(str.__eq__, decoded, bare))



def _chars_in(data: bytes, spans, chosen) -> int:
    """Characters spelled by runs of consecutive tokens that ``chosen(id)`` picks (each run's
    bytes decoded once, so a character cut into byte pieces counts once)."""
    count, run_start, run_end = 0, None, None
    for token_id, start, end in spans:
        if chosen(token_id):
            run_start = start if run_start is None else run_start
            run_end = end
        elif run_start is not None:
            count += len(data[run_start:run_end].decode("utf-8", errors="replace"))
            run_start = None
    if run_start is not None:
        count += len(data[run_start:run_end].decode("utf-8", errors="replace"))
    return count
