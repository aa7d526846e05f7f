"""An evaluation's whitespace-separated words counted across its batches: ``PlainWordTally``, the
readable twin of the compiled ``WordTally`` (``word_tally.pxi``; ``compiled.WordTally`` picks
one).

The words are ``baselines.WORD_RE``'s: runs of characters that are not Unicode White_Space
(``str.split`` also cuts at ``\\x1c``-``\\x1f``, which are not). ``add(text)`` counts a text's
words and answers how many it had and which were new, in the order first seen; ``counter()``
gives every word with its count, in that order. The compiled twin hashes each word where it
stands in the text and makes a string only for a word it has not seen, where ``str.split``
makes one per occurrence and ``Counter`` hashes each.

``PlainWordTally().add("a b a\\n") -> (3, ["a", "b"])``
"""

from __future__ import annotations

import re
from collections import Counter
from itertools import islice

_ODD_SPACE = re.compile("[\x1c-\x1f]")  # cut by ``str.split``, not White_Space
# Unicode White_Space (``baselines.WORD_RE``'s, which imports the compiled core: tests compare)
WHITE_SPACE = ("\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B)))
               + "\u2028\u2029\u202f\u205f\u3000")
_WORD = re.compile("[^%s]+" % "".join(map(re.escape, WHITE_SPACE)))


class PlainWordTally:
    """Words counted across texts (the module's note)."""

    def __init__(self):
        self._counts: Counter = Counter()

    def add(self, text: str) -> tuple[int, list[str]]:
        """``(words in text, the new ones in the order first seen)``."""
        words = text.split() if not _ODD_SPACE.search(text) else _WORD.findall(text)
        known = len(self._counts)
        self._counts.update(words)
        return len(words), list(islice(self._counts, known, None))

    def counter(self) -> Counter:
        """Every word with its count, in the order first seen."""
        return self._counts

    def __len__(self) -> int:
        return len(self._counts)
