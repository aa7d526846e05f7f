"""The distinct words of an evaluation in parts, merged in bounded memory. Two parts may share
words, so the number of distinct words of the whole (and of those covered) is not a sum: each
part writes its words sorted, one JSON line each (``word_lines``), and the merge walks every
part's lines at once in order (``heapq.merge``), holding one line per part, however many
distinct words the corpus has: ``distinct_words(sources) -> (distinct, covered)``.

``list(word_lines({"b": [2, False], "a": [1, True]}))`` -> ``[b'["a", 1, true]\\n',
b'["b", 2, false]\\n']``.
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Iterable, Iterator
from operator import itemgetter

WordLine = tuple[str, int, bool]  # (word, count, covered)


def word_lines(words: dict[str, list]) -> Iterator[bytes]:
    """A part's words (``EvalTotals.words``), sorted, as JSON lines."""
    for word in sorted(words):
        count, covered = words[word]
        yield json.dumps([word, count, bool(covered)], ensure_ascii=False).encode() + b"\n"


def read_word_lines(stream: Iterable[bytes]) -> Iterator[WordLine]:
    """The ``(word, count, covered)`` of each line of a words file (a binary stream)."""
    for line in stream:
        word, count, covered = json.loads(line)
        yield word, count, covered


def sorted_words(words: dict[str, list]) -> Iterator[WordLine]:
    """A part's words held in memory, in the order of a words file."""
    for word in sorted(words):
        count, covered = words[word]
        yield word, count, bool(covered)


def distinct_words(sources: Iterable[Iterable[WordLine]]) -> tuple[int, int]:
    """``(distinct words, distinct covered words)`` of parts whose words come sorted: a word
    counts once however many parts hold it (its coverage is the same in each: it depends on
    the word alone). ``distinct_words([[("a", 1, True)], [("a", 2, True), ("b", 1, False)]])
    -> (2, 1)``."""
    distinct = covered = 0
    last: str | None = None
    for word, _, is_covered in heapq.merge(*sources, key=itemgetter(0)):
        if word != last:
            distinct += 1
            covered += bool(is_covered)
            last = word
    return distinct, covered
