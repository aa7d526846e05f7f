"""The words a merge loop takes (``Words``): byte strings (byte-level BPE, each byte its own
symbol), tuples of indices into an alphabet (character-level BPE), or ``FlatWords``, indices laid
end to end (an extension's segmentation by its parent); each with its count. And their symbols end
to end (``symbol_array``), as both merge loops (``training_loop``, its compiled twin) lay them
out."""

from __future__ import annotations

import sys
from array import array
from itertools import chain
from typing import NamedTuple


class FlatWords(NamedTuple):
    """Words laid end to end, as the parent's segmentation gives them to an extension (no tuple
    per word): ``symbols`` (indices into the alphabet), ``lengths`` (each word's number of
    symbols), ``counts`` (each word's count). ``FlatWords(array("i", [0, 1, 1]), array("i", [2,
    1]), [3, 5])`` holds the words of ``{(0, 1): 3, (1,): 5}``."""
    symbols: array
    lengths: array
    counts: list[int]


# the words a merge loop takes: byte strings, tuples of indices, or FlatWords; each with a count
Words = dict[bytes, int] | dict[tuple[int, ...], int] | FlatWords


def is_byte_level(words: Words) -> bool:
    """Whether the words are byte strings (each byte its own symbol): ``is_byte_level({b"ab":
    1}) -> True``; ``is_byte_level({(0, 1): 1}) -> False``. No words count as byte-level."""
    return not isinstance(words, FlatWords) and isinstance(next(iter(words), b""), bytes)


def word_lengths_and_counts(words: Words) -> tuple[list[int], list[int]]:
    """Each word's number of symbols and its count: ``word_lengths_and_counts({b"ab": 2, b"c":
    5}) -> ([2, 1], [2, 5])``. ``ValueError`` for ``FlatWords`` whose parts disagree."""
    if not isinstance(words, FlatWords):
        return list(map(len, words)), list(words.values())
    lengths, counts = list(words.lengths), list(words.counts)
    if (sum(lengths) != len(words.symbols) or len(counts) != len(lengths)
            or min(lengths, default=0) < 0):
        raise ValueError(f"flat words of {len(words.symbols)} symbols, {sum(lengths)} in their "
                         f"lengths, {len(lengths)} lengths and {len(counts)} counts: they must "
                         f"agree, with no length below 0")
    return lengths, counts


_UTF32 = "utf-32-le" if sys.byteorder == "little" else "utf-32-be"


def symbol_array(words: Words, alphabet_size: int = 256) -> array:
    """The symbols of all words end to end: ``symbol_array([b"ab", b"c"]) -> array("i", [97,
    98, 99])``; ``symbol_array([(0, 2), (1,)], 3) -> array("i", [0, 2, 1])``; of ``FlatWords``,
    a copy of its ``symbols``."""
    if is_byte_level(words):
        sym = array("i")  # the fast path, in C: each byte widened to 32 bits by a codec
        sym.frombytes(b"".join(words).decode("latin-1").encode(_UTF32))
        if alphabet_size >= 256:
            return sym
    elif isinstance(words, FlatWords):
        sym = array("i", words.symbols)
    else:
        sym = array("i", chain.from_iterable(words))
    bad = [s for s in (min(sym), max(sym)) if not 0 <= s < alphabet_size] if sym else []
    if bad:
        raise ValueError(f"symbol {bad[0]} of a word is not an index into the alphabet of "
                         f"{alphabet_size} symbols")
    return sym
