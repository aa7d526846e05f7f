"""Which words a SentencePiece model covers (``encode_ordinary(word)`` is one token that is not
special: ``evaluation``'s word coverage), most without encoding them.

A word can be covered only by a piece that spells its normalized text, when that text starts
with a character that is a piece of its own (normal or user-defined: ``LineRoundTrip.safe``)
and the model is a Unigram or a BPE: a Unigram lattice puts an unknown (or byte) node only where
no one-character piece starts, and a BPE symbol holding a piece of its own is a piece or is
merged into one, so the first token is a piece, and its bytes are where the normalized text
starts; one token alone is the whole normalized text. A word of plain bytes that are no spaces
(``spm_offsets``) is normalized to itself after ``▁`` (the dummy prefix, when the model adds
it). So such a word whose normalized text is no piece (of any kind) is not covered; the others
are encoded.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from itertools import accumulate, compress
from operator import not_, or_

SPACE = "\u2581"


class WordCoverage:
    """``WordCoverage(pieces, safe, copies, dummy, encode, special)(words) -> [bool, ...]``:
    ``pieces`` every piece's text, ``safe`` the one-character pieces of their own, ``copies``
    the plain bytes that are no spaces (a string; empty: every word is encoded), ``dummy``
    whether the model adds the dummy prefix, ``encode`` the batch encode, ``special`` the
    special ids."""

    def __init__(self, pieces: set[str], safe: frozenset, copies: str, dummy: bool,
                 encode: Callable, special: set[int]):
        self._pieces, self._encode, self._special = pieces, encode, special
        self._prefix = SPACE if dummy else ""
        self._safe = safe
        self._other = re.compile("[^%s]" % re.escape(copies)) if copies else None

    def __call__(self, words: list[str]) -> list[bool]:
        found = [False] * len(words)
        special = self._special
        for index, ids in zip(*self._asked(words)):
            found[index] = len(ids) == 1 and ids[0] not in special
        return found

    def _asked(self, words: list[str]) -> tuple[list[int], list[list[int]]]:
        """The words to encode (their indexes) and their ids: those not of plain bytes (not
        ASCII, or an ASCII character no copy: found in the ASCII words joined), and those whose
        normalized text is a piece or starts with a character that is no piece of its own."""
        prefix, safe = self._prefix, self._safe
        if self._other is None or (prefix and prefix not in safe):
            asked = list(range(len(words)))
            return asked, self._encode(words)
        ascii = list(map(str.isascii, words))  # (a word that is not: encoded)
        maybe = list(map(or_, map(self._pieces.__contains__, map(prefix.__add__, words)),
                         map(not_, ascii)))
        if not prefix:
            maybe = [ask or not word or word[0] not in safe for ask, word in zip(maybe, words)]
        joined = "".join(compress(words, ascii))
        if self._other.search(joined):  # an ASCII character that is no copy
            chosen = list(compress(range(len(words)), ascii))
            starts = list(accumulate(map(len, compress(words, ascii)), initial=0))
            for match in self._other.finditer(joined):
                maybe[chosen[bisect_right(starts, match.start()) - 1]] = True
        asked = list(compress(range(len(words)), maybe))
        return asked, self._encode([words[index] for index in asked])
