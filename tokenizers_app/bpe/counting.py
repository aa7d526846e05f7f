"""Counting pre-tokens of a large file in parallel, over byte ranges cut at safe points.

A file is split into byte ranges whose boundaries are *safe cuts* (see ``pretokenize.iter_chunks``):
right after a special token, or (patterns gpt2/gpt4) after a lone newline between two non-space
characters. Each range then pre-tokenizes independently, so the summed counts equal the counts
of the whole file. ``plan_ranges`` and ``count_range`` are also what the registry's fan-out uses.

Its plain twin: one pass over the whole file; ``tests/bpe/test_counting.py`` compares the summed
ranges with it, and the training tests compare the whole path with ``reference_train`` in
``tests/bpe/reference.py``.
"""

from __future__ import annotations

import codecs
import multiprocessing
import os
import threading
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable
from itertools import accumulate

import regex

from .corpus import StrictUtf8
from .pretokenize import LINE_CUT, PreTokenizer, iter_chunks
from .special_tokens import special_regex, split_special

RANGE_BYTES = 4 << 20
MIN_RANGE_BYTES = 1 << 20
WAIT_SECONDS = 0.2
TICK_CHARS = 1 << 20
WINDOW_BYTES = 1 << 16
TICK_BLOCK = 1 << 16  # characters per block when a range is counted with ticks
_FIRST_LINE_CUTS = regex.compile(LINE_CUT)


class FileRanges:
    """Byte ranges of a local file: what ``plan_ranges`` and ``count_range`` read. Any object
    with ``name``, ``size`` and ``read(start, end) -> bytes`` does as well (the registry's
    ranged reads of an object in a bucket)."""

    def __init__(self, path):
        self.name, self.size = os.fspath(path), os.path.getsize(path)

    def read(self, start: int, end: int) -> bytes:
        with open(self.name, "rb") as handle:
            handle.seek(start)
            return handle.read(max(0, end - start))


def ranges_of(source):
    """A path becomes ``FileRanges``; a range reader is taken as it is."""
    return FileRanges(source) if isinstance(source, (str, os.PathLike)) else source


def plan_ranges(source, pattern: str, special_tokens: list[str],
                range_bytes: int = RANGE_BYTES) -> list[tuple[int, int]]:
    """Byte ranges ``[(start, end), ...]`` covering the file (a path or a range reader), each
    boundary a safe cut. A file without a safe cut near a boundary gets fewer, longer ranges.
    """
    source = ranges_of(source)
    size = source.size
    line_cuts = PreTokenizer(pattern).line_cuts
    cuts = [0]
    for offset in range(range_bytes, size, range_bytes):
        if offset > cuts[-1]:
            cut = find_cut(source, offset, size, special_tokens, line_cuts)
            if cut < size and cut > cuts[-1]:
                cuts.append(cut)
    cuts.append(size)
    return list(zip(cuts, cuts[1:]))


def find_cut(source, offset: int, size: int, special_tokens: list[str], line_cuts: bool) -> int:
    """The first safe cut at or after byte ``offset`` (``size`` when there is none)."""
    source = ranges_of(source)
    longest = max((len(t) for t in special_tokens), default=0)
    back = 4 * longest + 4  # to see a special token that straddles ``offset``
    special = special_regex(special_tokens)
    start = max(0, offset - back)
    while start < size:
        data = source.read(start, start + WINDOW_BYTES + back)
        skip = _char_start(data)
        text = codecs.getincrementaldecoder("utf-8")("surrogateescape").decode(data[skip:])
        cut = _first_cut(text, special, longest, line_cuts, offset - start - skip)
        if cut is not None:
            return start + skip + cut
        start += WINDOW_BYTES
    return size


def _char_start(data: bytes) -> int:
    """Bytes to skip so that ``data`` starts at a UTF-8 character (past continuation bytes)."""
    skip = 0
    while skip < min(4, len(data)) and 0x80 <= data[skip] < 0xC0:
        skip += 1
    return skip


def _first_cut(text: str, special, longest: int, line_cuts: bool, min_byte: int) -> int | None:
    """Byte position of the first safe cut of ``text`` at or after byte ``min_byte``, if any.

    The window starts at an arbitrary offset, where matching special tokens may be out of phase
    with the whole file (think of a token like ``"aa"``), so every occurrence counts, overlapping
    ones included: a line cut is taken only where no occurrence spans it, a cut after a special
    token only when no other occurrence overlaps that one. Only cuts with enough text after
    them to be certain are taken (a longer special token, the character after a newline)."""
    found = [m.span() for m in special.finditer(text, overlapped=True)] if special else []
    starts = [start for start, _ in found]
    reach = list(accumulate((end for _, end in found), max))  # the furthest end up to i
    candidates = [end for i, (start, end) in enumerate(found)
                  if (i == 0 or reach[i - 1] <= start)
                  and (i + 1 == len(found) or starts[i + 1] >= end)]
    if line_cuts:
        for match in _FIRST_LINE_CUTS.finditer(text):
            before = bisect_left(starts, match.start()) - 1  # occurrences starting before it
            if before < 0 or reach[before] <= match.start():
                candidates.append(match.start())
    for cut in sorted(candidates):
        if cut + max(longest, 1) > len(text):
            return None
        position = len(text[:cut].encode("utf-8", "surrogateescape"))
        if position >= min_byte:
            return position
    return None


def default_workers() -> int:
    """All cores, or 1 inside a daemonic process (which may not start children)."""
    if multiprocessing.current_process().daemon:
        return 1
    return os.cpu_count() or 1


def is_large_file(path) -> bool:
    """Whether a document is a file worth counting in parallel (more than two ranges)."""
    return path is not None and os.path.getsize(path) > 2 * RANGE_BYTES


def count_chunk(chunk: str, pretokenizer: PreTokenizer, special_tokens: list[str],
                tick=None) -> Counter:
    """``count_chunk("a a<|e|>", PreTokenizer(), ["<|e|>"]) -> Counter({"a": 1, " a": 1})``.

    A text longer than ``TICK_CHARS`` (possible where no safe cut exists: pattern ``none`` or a
    custom regex) is split in batches, calling ``tick()`` after each."""
    counts: Counter[str] = Counter()
    for segment, is_special in split_special(chunk, special_regex(special_tokens)):
        if is_special:
            continue
        if tick is None or len(segment) <= TICK_CHARS:
            counts.update(pretokenizer.split(segment))
            continue
        for batch in pretokenizer.iter_split(segment):
            counts.update(batch)
            tick()
    return counts


def count_range(path, start: int, end: int, pattern: str, special_tokens: list[str],
                tick: Callable[[int, int], None] | None = None) -> Counter:
    """Count the pre-tokens (as ``str``) of bytes ``[start, end)`` of a UTF-8 file (a path or
    a range reader, see ``FileRanges``; cut at characters). With ``tick``, the text is counted chunk by chunk (cut where pre-tokens cannot
    change) and ``tick(characters done, characters in all)`` is called after each."""
    source = ranges_of(path)
    data = source.read(start, end)
    text = StrictUtf8(f"corpus file {source.name!r}", start).decode(data, final=True)
    pretokenizer = PreTokenizer(pattern)
    if tick is None:
        return count_chunk(text, pretokenizer, special_tokens)
    blocks = (text[i:i + TICK_BLOCK] for i in range(0, len(text), TICK_BLOCK))
    counts: Counter[str] = Counter()
    done = 0
    for chunk in iter_chunks(blocks, special_tokens, pretokenizer.line_cuts, TICK_BLOCK * 4):
        add_counts(counts, count_chunk(chunk, pretokenizer, special_tokens))
        done += len(chunk)
        tick(done, len(text))
    return counts


def _count_range_job(job) -> tuple[int, dict[bytes, int]]:
    """A worker's job: the counts of a range, with the pre-tokens already as UTF-8 bytes."""
    path, start, end, pattern, special_tokens = job
    counts = count_range(path, start, end, pattern, special_tokens)
    return end - start, dict(zip(map(str.encode, counts), counts.values()))


def count_file_parallel(path, pattern: str, special_tokens: list[str], workers: int,
                        on_range=None) -> dict[bytes, int]:
    """Count a file's pre-tokens (as UTF-8 bytes) in ``workers`` processes. ``on_range(bytes)``
    is called after each range, and with 0 at least every ``WAIT_SECONDS`` while waiting; it
    may raise to stop (the pool is then terminated)."""
    jobs = [(os.fspath(path), a, b, pattern, special_tokens)
            for a, b in plan_ranges(path, pattern, special_tokens, parallel_range_bytes(path,
                                                                                  workers))]
    method = pool_start_method()
    if method == "fork":
        PreTokenizer(pattern).compile()  # the workers inherit the compiled patterns
    counts: dict[bytes, int] = {}
    for part in pooled_parts(_count_range_job, jobs, workers, on_range, method):
        counts = summed(counts, part)
    return counts


def parallel_range_bytes(path, workers: int) -> int:
    """The size of the byte ranges a file is counted in by ``workers`` processes: at least two
    ranges per worker, so that no worker is left with one range more at the end."""
    return min(RANGE_BYTES, max(MIN_RANGE_BYTES, -(-os.path.getsize(path) // (2 * workers))))


def pooled_parts(job, jobs: list, workers: int, on_range=None, method: str | None = None):
    """``job(j)`` for each of ``jobs`` in a pool of ``workers`` processes, yielding the ``part``
    of each ``(size, part)`` result as it comes; ``on_range(size)`` is called after each, and
    with 0 at least every ``WAIT_SECONDS`` while waiting. It may raise to stop: the pool is
    then terminated."""
    on_range = on_range or (lambda size: None)
    context = multiprocessing.get_context(method or pool_start_method())
    with context.Pool(min(workers, len(jobs))) as pool:
        results = pool.imap_unordered(job, jobs)
        for _ in jobs:
            while True:
                try:
                    size, part = results.next(timeout=WAIT_SECONDS)
                    break
                except multiprocessing.TimeoutError:
                    on_range(0)
            yield part
            on_range(size)


def pool_start_method() -> str:
    """``fork`` when this process runs one thread (a forked worker starts at once, with the
    modules and compiled patterns it needs), else ``spawn``: forking a process that runs
    other threads may copy a lock one of them holds."""
    return "fork" if threading.active_count() == 1 and os.name == "posix" else "spawn"


def summed(total: dict, part: dict) -> dict:
    """``total`` with ``part`` added in place, or ``part`` itself while ``total`` is empty (the
    first table is then not copied)."""
    if not total:
        return part
    add_counts(total, part)
    return total


MAX_CORPUS_WEIGHT = 100


def check_weights(weights, documents: int | None = None) -> list[int] | None:
    """Corpus weights as a list of integers from 1 to ``MAX_CORPUS_WEIGHT`` (``None``: every
    weight 1), refused in words otherwise; with ``documents``, one weight per document."""
    if weights is None:
        return None
    weights = list(weights)
    for weight in weights:
        if isinstance(weight, bool) or not isinstance(weight, int) or \
                not 1 <= weight <= MAX_CORPUS_WEIGHT:
            raise ValueError(f"a corpus weight is a whole number from 1 to {MAX_CORPUS_WEIGHT}, "
                             f"not {weight!r}")
    if documents is not None and len(weights) != documents:
        raise ValueError(f"{len(weights)} corpus weights for {documents} documents: give one "
                         f"weight per document")
    return weights


def weight_of(weights: list[int] | None, index: int) -> int:
    """The weight of document ``index`` (1 without weights); a source longer than its weights
    is refused in words."""
    if weights is None:
        return 1
    if index >= len(weights):
        raise ValueError(f"{len(weights)} corpus weights for more documents: give one weight "
                         f"per document")
    return weights[index]


def scaled(counts: dict, weight: int) -> dict:
    """``counts`` with every count multiplied by ``weight`` (the same table when it is 1): a
    corpus of weight 2 counts as the corpus given twice."""
    if weight == 1:
        return counts
    return {word: count * weight for word, count in counts.items()}


def add_counts(total: dict, part: dict) -> None:
    """``total += part`` (``Counter.update`` without its per-call overhead)."""
    get = total.get
    for word, count in part.items():
        total[word] = get(word, 0) + count
