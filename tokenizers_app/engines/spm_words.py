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
from collections.abc import Callable

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
        self._plain = re.compile("[%s]+" % re.escape(copies)).fullmatch if copies else None

    def __call__(self, words: list[str]) -> list[bool]:
        plain, prefix, pieces, safe = self._plain, self._prefix, self._pieces, self._safe
        found = [False] * len(words)
        if plain is None:
            asked = list(range(len(words)))
        else:  # the plain words whose normalized text may be a piece, and all the others
            asked = [index for index, word in enumerate(words)
                     if not plain(word) or prefix + word in pieces
                     or (prefix + word)[0] not in safe]
        special = self._special
        for index, ids in zip(asked, self._encode([words[index] for index in asked])):
            found[index] = len(ids) == 1 and ids[0] not in special
        return found
