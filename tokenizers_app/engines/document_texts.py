"""An engine's documents (``evaluation.documents``) found on whole stretches of text rather than
line by line, and sent in batches (``evaluation.batches``): the same texts, made by a regular
expression and ``str.find`` in C instead of a Python step per line.

A document ends after a blank line (``"\\n"`` or ``"\\r\\n"`` at a line start: ``_BLANK``) or
after the line that takes it to ``most`` characters from its start, whichever comes first: the
first line end at or past its character ``most - 1``. Each document starts at a line start, so
a blank line is one wherever the text was cut into blocks; the text kept for the next block is
searched again only from its last character (a ``"\\r"`` there may begin a blank line with the
block's ``"\\n"``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from ..bpe.corpus import sized_groups

_BLANK = re.compile(r"^\r?\n", re.MULTILINE)
STRETCH_CHARS = 1 << 16  # blocks (the lines ``read_lines`` gives) joined to about this many


def document_texts(blocks: Iterable[str], most: int) -> Iterator[str]:
    """``"".join(doc) for doc in documents(LineCounter(blocks), most)``:
    ``list(document_texts(["a\\n\\nb", "\\nc"], 100)) -> ["a\\n\\n", "b\\n", "c"]``."""
    rest, searched = "", 0  # the text after the last document, searched up to ``searched``
    for stretch in _stretches(blocks):
        text = rest + stretch
        start = 0
        blanks = _BLANK.finditer(text, max(searched - 1, 0))
        blank = next(blanks, None)
        while True:
            while blank is not None and blank.end() <= start:
                blank = next(blanks, None)
            end = blank.end() if blank is not None else -1
            if end < 0 or end - start >= most:  # the size rule's line end, if it comes first
                sized = text.find("\n", start + most - 1)
                end = sized + 1 if sized >= 0 else end
            if end < 0:
                break
            yield text[start:end]
            start = end
        rest, searched = text[start:], len(text) - start
    if rest:
        yield rest


def text_batches(texts: Iterable[str], most: int) -> Iterator[list[str]]:
    """``evaluation.batches`` of document texts: documents up to the one that takes the batch
    to ``most`` characters."""
    return sized_groups(texts, most)


def _stretches(blocks: Iterable[str]) -> Iterator[str]:
    """The blocks joined into stretches of at least ``STRETCH_CHARS`` characters (the last may
    be shorter; a longer block is a stretch of its own)."""
    return map("".join, sized_groups(blocks, STRETCH_CHARS))


def line_count(joined: str) -> int:
    """The lines of documents whose text joined is ``joined``: each ``"\\n"`` ends one, and a
    last document without one ends in a line of its own."""
    return joined.count("\n") + bool(joined and not joined.endswith("\n"))
