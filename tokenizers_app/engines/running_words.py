"""An evaluation's words when its batches are counted in its own process
(``evaluation.library_totals``): one ``Counter`` of every word so far, filled by C
(``Counter.update`` of a batch's words), whose new words are the ones it added last, at its
end (a dict keeps its keys in the order they came). Only those are asked whether they are
covered; the totals' ``[count, covered]`` per word are made once, at the end.

A sandboxed engine's child counts each batch's words itself (``batch_words``), into the
batch's totals or, for its answer (``totals_wire``), as columns.
"""

from __future__ import annotations

from collections import Counter
from itertools import compress, filterfalse, islice

COVERED_KEPT = 1 << 20  # words (and lines) whose coverage a process remembers between batches


def count(tokenizer, memo: dict, words: list[str], encode, counts: Counter) -> None:
    """A batch's ``words`` (whitespace-separated, in order) added to ``memo["running"]``, the
    new ones' coverage to ``memo["covered"]`` (the covered words)."""
    running = memo.setdefault("running", Counter())
    known = len(running)
    running.update(words)
    fresh = list(islice(running, known, None))
    if fresh:
        covered = memo.setdefault("covered", set())
        covered.update(compress(fresh, coverage(tokenizer, fresh, encode)))
    counts["own_words"] += len(words)


def coverage(tokenizer, words: list[str], encode) -> list[bool]:
    """Whether each word is one token that is not special: the engine's own answer where it
    rules words out unasked (``words_covered``), else from ``encode``."""
    if not words:
        return []
    cover = getattr(tokenizer, "words_covered", None)
    if cover:
        return cover(words)
    special = set(tokenizer.special_ids.values())
    return [len(ids) == 1 and ids[0] not in special for ids in encode(words)]


def finish(found, memo: dict, words: Counter | None) -> None:
    """The words counted (``count``) put in ``found``, each ``[count, covered]``, with the
    covered ones' count; ``words`` (when given) gets them with their counts. Without a count
    (the batches' totals held their words), ``words`` gets the totals' words."""
    running = memo.get("running")
    if running is None:
        if words is not None:
            words.update({word: n for word, (n, _) in found.words.items()})
        return
    covered = memo.get("covered", set())
    found.words = {word: [n, word in covered] for word, n in running.items()}
    found.counts["covered_words"] += sum(map(running.__getitem__, covered))
    if words is not None:
        words.update(running)


def batch_words(tokenizer, own: Counter, covered: dict, encode, found, counts,
                 columns: list | None) -> None:
    """The batch's words in its totals, each ``[count, covered]`` (or, given ``columns``, put
    there: the batch's ``Counter`` and the words' coverage, in its order); ``covered``
    remembers the words' coverage between batches."""
    if len(covered) > COVERED_KEPT:  # (before the fresh ones are chosen: each is looked up)
        covered.clear()
    fresh = list(filterfalse(covered.__contains__, own))
    covered.update(zip(fresh, coverage(tokenizer, fresh, encode)))
    flags = list(map(covered.__getitem__, own))
    if columns is None:
        found.words = {word: [count, flag] for (word, count), flag in zip(own.items(), flags)}
    else:
        columns += [own, flags]
    counts["own_words"] += sum(own.values())
    counts["covered_words"] += sum(compress(own.values(), flags))
