"""An evaluation's words when its batches are counted in its own process
(``evaluation.library_totals``): one tally of every word so far (``bpe.compiled.WordTally``:
hashed in C where each word stands in the batch, a string made only for a new one; or its plain
twin, a ``Counter``), which answers a batch's new words. Only those are asked whether they are
covered; the totals' ``[count, covered]`` per word are made once, at the end.

A sandboxed engine's child counts each batch's words itself (``batch_words``), into the
batch's totals or, for its answer (``totals_wire``), as columns.
"""

from __future__ import annotations

from collections import Counter
from itertools import compress, filterfalse

from ..bpe.compiled import WordTally

COVERED_KEPT = 1 << 20  # words (and lines) whose coverage a process remembers between batches


def count(tokenizer, memo: dict, text: str, encode, counts: Counter) -> None:
    """A batch's whitespace-separated words (of ``text``, its documents joined) added to
    ``memo["running"]`` (a ``WordTally``), the new ones' coverage to ``memo["covered"]`` (the
    covered words)."""
    running = memo.get("running")
    if running is None:
        running = memo["running"] = WordTally()
    found, fresh = running.add(text)
    if fresh:
        covered = memo.setdefault("covered", set())
        covered.update(compress(fresh, coverage(tokenizer, fresh, encode)))
    counts["own_words"] += found


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
    running, covered = running.counter(), memo.get("covered", set())
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
