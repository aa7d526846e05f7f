"""A SentencePiece normalizer's offsets (each normalized byte's byte in the text, and the end's),
for the texts whose every byte is a *plain* one, computed with numpy instead of asked of the
library (``normalize(with_offsets=True)`` makes a Python int per normalized byte).

The library's ``Normalizer::Normalize`` reads the text by prefix matches: at each place the
longest user-defined piece, else the longest key of its rules (``precompiled_charsmap``, a
Darts double-array trie whose values point into a blob of NUL-ended replacements), else one
UTF-8 character copied as it is; every byte a match writes maps to where the match starts. With
``remove_extra_whitespaces`` it first drops the matches that give ``" "``, then writes the dummy
``▁`` (``add_dummy_prefix``, mapped to where the text now starts), then each match, a ``" "``
written as ``▁`` (``escape_whitespaces``) and dropped after a match ending in ``" "``; at the
end it drops the last ``▁`` (the end then maps to where that ``▁`` maps) and adds the end.

A byte is plain (``plain_bytes``) when it is ASCII, starts no user-defined piece, and every
rule key that starts with it is either the byte alone, replaced by itself or by ``" "``, or
goes on with a byte that is not ASCII. In a text of plain bytes only (ASCII), a longer key can
never match, so each byte is one match: a *space* (replaced by ``" "``) or a *copy* (itself).
Then, the spaces' runs cut the text into words, and (``text_offsets``) the normalized text is
``▁`` (mapped to the first copy) then the words, each copy one byte mapped to itself, each run
of spaces between two words one ``▁`` mapped to the run's first byte; the end maps to the end
of the last word (a text of spaces only is normalized to nothing, without offsets: the
library gives none either). A text is computed so when it ends in a space: the end then maps to
a byte of the text (its trailing run's first), so every offset is a byte's place, each byte's
repeated as many times as normalized bytes map to it. Any other text (a byte not plain, no
space at its end), and every text of a model whose options differ (whitespace kept, not
escaped, or a suffix), is left to the library.

Checks beyond the argument: once per model the computed offsets and normalized texts are
compared with the library's on probe texts (``probe_ok``; a model that fails uses the library
for every text), and the tests compare them on six normalizer setups, random adversarial texts,
multilingual samples and a corpus slice.
"""

from __future__ import annotations

import re
import struct
from itertools import chain

SPACE = "\u2581"
_ASCII_CANDIDATES = bytes([9, 10, 13] + list(range(32, 127)))
# the probe: every candidate byte, among spaces, leading and trailing runs, repeated
_PROBE = [b"", b" ", b"\n\n", b" a", b"a ", b"  a  b\t\tc \n", b"\t\r\n x"]


def plain_bytes(proto: bytes, field) -> tuple | None:
    """``(plain, space)``: two tables of 256 booleans (numpy) marking the plain bytes and, of
    them, the spaces (the module's note); None when the normalizer's options are not
    ``remove_extra_whitespaces``, ``escape_whitespaces`` and whitespace as a prefix, or its
    rules cannot be read. ``pieces``: the model's ``(piece, type)`` (type 4: user-defined)."""
    import numpy as np

    spec, trainer = field(proto, 3), field(proto, 2)
    if not isinstance(spec, bytes):
        return None

    def flag(message, number: int, default: bool) -> bool:
        value = field(message, number) if isinstance(message, bytes) else None
        return default if value is None else bool(value)

    if not (flag(spec, 4, True) and flag(spec, 5, True)) or flag(trainer, 24, False):
        return None
    charsmap = field(spec, 2)
    rules = _Rules(charsmap) if isinstance(charsmap, bytes) and charsmap else None
    starts = {piece[:1] for piece in user_defined(proto, field)}
    plain, space = np.zeros(256, dtype=bool), np.zeros(256, dtype=bool)
    for byte in _ASCII_CANDIDATES:
        if bytes([byte]) in starts:
            continue
        replaced = rules.single(byte) if rules else bytes([byte])
        if replaced is None:  # a longer key goes on with an ASCII byte
            continue
        if replaced in (b" ", bytes([byte])):
            plain[byte] = True
            space[byte] = replaced == b" "
    return plain, space


def user_defined(proto: bytes, field) -> list[bytes]:
    """The user-defined pieces (type 4) of a ModelProto's pieces (its field 1, repeated: each a
    message of the piece (field 1) and its type (field 3))."""
    found, index = [], 0
    while index < len(proto):
        key, index = varint(proto, index)
        wire = key & 7
        if wire == 0:
            _, index = varint(proto, index)
            continue
        if wire != 2:  # the model's fields are varints and messages (anything else: stop)
            index += {1: 8, 5: 4}.get(wire, len(proto))
            continue
        size, index = varint(proto, index)
        value, index = proto[index:index + size], index + size
        # (a type 4 is written 0x18 0x04: the messages without those bytes are skipped)
        if key >> 3 == 1 and b"\x18\x04" in value and field(value, 3) == 4:
            found.append(field(value, 1) or b"")
    return found


def varint(data: bytes, index: int) -> tuple[int, int]:
    """A protobuf varint at ``data[index:]``: ``(value, the index after it)``."""
    value, shift = 0, 0
    while True:
        byte = data[index]
        value |= (byte & 0x7F) << shift
        index += 1
        if byte < 0x80:
            return value, index
        shift += 7


class _Rules:
    """The rule trie of a ``precompiled_charsmap``: a little-endian ``uint32`` size of the
    trie, its units (``uint32`` each), then the replacements."""

    def __init__(self, blob: bytes):
        (size,) = struct.unpack_from("<I", blob, 0)
        self.units = struct.unpack_from(f"<{size // 4}I", blob, 4)
        self.replacements = blob[4 + size:]

    def _child(self, position: int, label: int):
        """The unit and the position after it of ``label`` under ``position``, or None."""
        index = position ^ label
        if index >= len(self.units):
            return None
        unit = self.units[index]
        if unit & ((1 << 31) | 0xFF) != label:
            return None
        return unit, index ^ _offset(unit)

    def single(self, byte: int) -> bytes | None:
        """What a text of ASCII bytes gets for ``byte`` at a place: its replacement (itself
        when no key is the byte alone), or None when a key goes on from it with an ASCII
        byte."""
        found = self._child(_offset(self.units[0]), byte)
        if found is None:
            return bytes([byte])
        unit, position = found
        if any(self._child(position, label) is not None for label in range(1, 128)):
            return None
        if not (unit >> 8) & 1:  # no key ends here: the byte is copied
            return bytes([byte])
        start = self.units[position] & ((1 << 31) - 1)
        end = self.replacements.find(b"\0", start)
        return self.replacements[start:end if end >= 0 else len(self.replacements)]


def _offset(unit: int) -> int:
    return (unit >> 10) << ((unit & (1 << 9)) >> 6)


def text_offsets(codes, lengths, space, dummy: bool):
    """The offsets of texts of plain bytes, each ending in a space (or empty), joined as bytes
    in ``codes`` (numpy ``uint8``), ``lengths`` bytes each: one array of their offsets, text
    after text, each a place in its text, and each text's count of offsets (its normalized
    length + 1; 0 for a text normalized to nothing, as the library gives). ``space``: the table
    of spaces; ``dummy``: whether the model adds the dummy prefix.

    Each byte is given how many normalized bytes map to it: a copy 1, the first space of a run
    3 (its ``▁``), the other spaces 0; then a leading run's first space 0, a trailing run's 1
    (the end maps to it: it ends the last word); the text's first copy 3 more (the dummy
    ``▁``). The offsets are each byte's place repeated that many times."""
    import numpy as np

    lengths = np.asarray(lengths, dtype=np.int64)
    ends = np.cumsum(lengths)
    places = ends - lengths
    spaces = space[codes]
    weights = np.where(spaces, 3, 1)
    weights[1:][spaces[1:] & spaces[:-1]] = 0
    copies = np.flatnonzero(~spaces)
    low, high = np.searchsorted(copies, places), np.searchsorted(copies, ends)
    words = high > low  # the texts with a copy
    if len(copies):
        first = copies[np.minimum(low, len(copies) - 1)][words]
        stop = copies[np.maximum(high - 1, 0)][words] + 1  # a space: the text ends in one
        weights[stop] = 1
        if dummy:
            weights[first] += 3
    leading = lengths > 0
    leading[leading] = spaces[places[leading]]
    weights[places[leading]] = 0
    counted = np.add.reduceat(np.append(weights, 0), places) if len(places) else places
    counted[lengths == 0] = 0
    local = np.arange(len(codes), dtype=np.int64) - np.repeat(places, lengths)
    return np.repeat(local, weights), counted


def probe_ok(processor, plain, space, dummy: bool) -> bool:
    """Whether ``text_offsets`` gives the library's offsets, and the normalized texts are the
    words joined by ``▁`` (after the dummy ``▁``), on the probe texts (every plain byte, alone,
    between words, in leading and trailing runs)."""
    import numpy as np

    chosen = bytes(np.flatnonzero(plain).tolist())
    texts = list(_PROBE) + [chosen, b"x" + chosen + b"y", chosen[::-1] + b" " + chosen]
    texts = [t for t in texts if all(plain[b] for b in t)]
    end = bytes(np.flatnonzero(space).tolist()[:1])
    texts = [t + end for t in texts] + texts
    offsets = NormalizedOffsets(processor, None, None, (plain, space, dummy))
    mine, counts = offsets(texts)
    normalized = processor.normalize(texts, with_offsets=True)
    theirs = [found[1] for found in normalized]
    spaces = bytes(np.flatnonzero(space).tolist()).decode()
    words = [re.split(f"[{re.escape(spaces)}]+", text.decode()) for text in texts]
    words = [[word for word in some if word] for some in words]
    return ([text.decode() for text, _ in normalized]  # words joined by ▁ after the dummy
            == [SPACE * (dummy and bool(some)) + SPACE.join(some) for some in words]
            and counts.tolist() == list(map(len, theirs))
            and mine.tolist() == [offset for offsets in theirs for offset in offsets])


class NormalizedOffsets:
    """``NormalizedOffsets(processor, proto, field)(encoded) -> (flat, counts)``: the offsets
    of each text (UTF-8 bytes; each offset a place in its text) one after the other as one
    array, and how many each text has; a text of plain bytes that ends in a space (or is
    empty) by ``text_offsets``, any other by the library, in one call. ``tables`` (the probe's):
    ``(plain, space, dummy)`` given rather than read and checked."""

    def __init__(self, processor, proto: bytes, field, tables=None):
        self._sp = processor
        if tables is None:
            spec = field(proto, 3)
            dummy = field(spec, 3) if isinstance(spec, bytes) else None
            found = plain_bytes(proto, field)
            tables = (*found, True if dummy is None else bool(dummy)) if found else None
            if tables and not probe_ok(processor, *tables):
                tables = None
        self.plain, self.space, self.dummy = tables or (None, None, True)

    def __call__(self, encoded: list[bytes]):
        import numpy as np

        lengths = np.fromiter(map(len, encoded), np.int64, len(encoded))
        codes = np.frombuffer(b"".join(encoded), dtype=np.uint8)
        chosen = self._plain_texts(codes, lengths)
        others = np.flatnonzero(~chosen)
        theirs = [found[1] for found in self._sp.normalize([encoded[k] for k in others.tolist()],
                                                           with_offsets=True)]
        counts = np.zeros(len(encoded), dtype=np.int64)
        counts[others] = list(map(len, theirs))
        theirs = np.fromiter(chain.from_iterable(theirs), np.int64, int(counts[others].sum()))
        if len(others) == len(encoded):
            return theirs, counts
        if len(others):  # the plain texts' bytes alone
            codes = np.frombuffer(b"".join([encoded[k] for k in np.flatnonzero(chosen).tolist()]),
                                  dtype=np.uint8)
        mine, counts[chosen] = text_offsets(codes, lengths[chosen], self.space, self.dummy)
        if not len(others):
            return mine, counts
        flat = np.empty(len(mine) + len(theirs), dtype=np.int64)
        ours = np.repeat(chosen, counts)
        flat[ours], flat[~ours] = mine, theirs
        return flat, counts

    def _plain_texts(self, codes, lengths):
        """Which texts hold plain bytes only and end in a space, or are empty (numpy)."""
        import numpy as np

        if self.plain is None or not len(lengths):
            return np.zeros(len(lengths), dtype=bool)
        ends = np.cumsum(lengths)
        bad = np.flatnonzero(~self.plain[codes])
        plain = np.ones(len(lengths), dtype=bool)
        plain[np.searchsorted(ends, bad, "right")] = False
        full = lengths > 0
        plain[full] &= self.space[codes[ends[full] - 1]]
        return plain
