"""A corpus cut into parts for evaluation on several workers: byte ranges whose boundaries are
cuts its tokenizer's rule allows (``eval_totals.cut_allowed``), each read on its own.

``plan_parts(source, rule, part_bytes)`` gives the ranges; ``part_blocks(source, start, end)``
the text of one range, block by block (strict UTF-8: a boundary is always after a newline, so a
range starts and ends at a character). ``source`` is a path or a range reader (``size``,
``read(start, end)``), as counting reads (``counting.ranges_of``).
"""

from __future__ import annotations

from collections.abc import Iterator

from .corpus import StrictUtf8
from .counting import ranges_of
from .eval_totals import NONE, cut_allowed

WINDOW_BYTES = 1 << 16  # bytes looked at per read while looking for a cut
BLOCK_BYTES = 1 << 20  # bytes read at a time from a part


def plan_parts(source, rule: str, part_bytes: int) -> list[tuple[int, int]]:
    """Byte ranges covering the corpus, each about ``part_bytes`` long, cut only where ``rule``
    allows; a corpus without such a cut (or the rule ``NONE``) is one range."""
    source = ranges_of(source)
    size, cuts = source.size, [0]
    if rule != NONE:
        for offset in range(part_bytes, size, part_bytes):
            if offset > cuts[-1]:
                cut = find_cut(source, rule, max(offset, cuts[-1] + 1))
                if cuts[-1] < cut < size:
                    cuts.append(cut)
    cuts.append(size)
    return list(zip(cuts, cuts[1:]))


def find_cut(source, rule: str, offset: int) -> int:
    """The first byte offset at or after ``offset`` where ``rule`` allows a cut, or the size."""
    source = ranges_of(source)
    size, start = source.size, offset
    while start < size:
        low = max(0, start - 8)  # to see the line end before ``start`` and what precedes it
        data = source.read(low, start + WINDOW_BYTES + 4)
        at = data.find(b"\n", max(0, start - low - 1))
        while at != -1 and low + at + 1 < size:
            cut = low + at + 1
            if cut >= offset and cut_allowed(rule, _line_before(data, at + 1, low == 0),
                                             _char_after(data, at + 1)):
                return cut
            at = data.find(b"\n", at + 1)
        start += WINDOW_BYTES
    return size


def _line_before(data: bytes, end: int, from_start: bool) -> str:
    """Enough of the line ending at ``data[end]`` for ``cut_allowed``: the line when it is
    blank, else its last character and its line end (``data`` holds the 8 bytes before
    ``end``, or ``from_start``: all of them)."""
    text = data[max(0, end - 8):end].decode("utf-8", "ignore")  # a cut-off character dropped
    line = "\r\n" if text.endswith("\r\n") else "\n"
    before = text[:-len(line)]
    if before.endswith("\n") or (not before and from_start and end == len(line)):
        return line  # a blank line
    return before[-1:] + line


def _char_after(data: bytes, at: int) -> str:
    return data[at:at + 4].decode("utf-8", "ignore")[:1]


def part_blocks(source, start: int, end: int, block_bytes: int = BLOCK_BYTES) -> Iterator[str]:
    """The text of bytes ``[start, end)``, decoded as strict UTF-8 a block at a time."""
    source = ranges_of(source)
    decoder = StrictUtf8(f"corpus {source.name!r}", offset=start)
    at = start
    while at < end:
        data = source.read(at, min(end, at + block_bytes))
        if not data:
            break
        at += len(data)
        text = decoder.decode(data, final=at >= end)
        if text:
            yield text
    tail = decoder.decode(b"", final=True)
    if tail:
        yield tail
