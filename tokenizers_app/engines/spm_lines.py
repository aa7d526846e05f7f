"""Which lines a SentencePiece model gives back unchanged (``decode(encode(line)) == line``,
the lossless rate), mostly without encoding them: from the library's ``normalize`` of each
line, where the library's decode provably gives that text back, else by encode and decode.

The library's decode of an encoding without unknown or byte pieces writes its pieces one after
the other with ``▁`` as a space, and drops a leading ``▁`` of the first piece when the model
adds a dummy prefix or removes extra whitespace (``SentencePieceProcessor::Decode``); with
extra whitespace removed it drops the leading ``▁`` of the next pieces too while nothing else
was written, so a normalized text starting ``▁▁`` is left to the library. The pieces of an
encoding spell the normalized text, so the decode is the normalized text so rewritten, when:

- the model has no denormalizer, escapes whitespace as ``▁`` and does not treat whitespace as a
  suffix (read from its ``.model``; else every line goes to the library);
- the line holds no ``▁`` of its own;
- each character of its normalized text is a piece of its own (normal or user-defined): then
  no position lacks a one-character piece, so neither a Unigram lattice nor a BPE start has an
  unknown or byte piece.

A line of plain bytes (``spm_offsets``: ASCII the model's rules copy or make a space, no
user-defined piece starting with one) is normalized to ``▁`` (the dummy prefix, when the model
adds it) and its words, the runs of copies, joined by ``▁``; the decode then writes the words
joined by spaces. So such a line whose characters are each a piece of their own is lossless
exactly when it is its words joined by single ``" "``: no other space byte, no leading or
trailing ``" "``, no two in a row (an empty line: lossless). Those lines are decided so, all at
once with numpy (``_from_plain``), without ``normalize``.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from itertools import accumulate

SPACE = "\u2581"


class LineRoundTrip:
    """``LineRoundTrip(processor, proto, encode, decode)(lines) -> [bool, ...]``."""

    def __init__(self, processor, proto: bytes, field: Callable, encode: Callable,
                 decode: Callable, plain=None):
        self._sp, self._encode, self._decode = processor, encode, decode
        self._plain = plain  # (plain, space) byte tables (``spm_offsets.plain_bytes``) or None
        spec, denormalizer = field(proto, 3), field(proto, 5)
        trainer = field(proto, 2)

        def flag(message, number: int, default: bool) -> bool:
            value = field(message, number) if isinstance(message, bytes) else None
            return default if value is None else bool(value)

        self.strips = flag(spec, 3, True) or flag(spec, 4, True)  # dummy prefix, extra spaces
        charsmap = field(denormalizer, 2) if isinstance(denormalizer, bytes) else None
        size = processor.get_piece_size()
        self.safe = frozenset(
            piece for piece, i in ((processor.id_to_piece(i), i) for i in range(size))
            if len(piece) == 1 and not (processor.is_unknown(i) or processor.is_control(i)
                                        or processor.is_byte(i) or processor.is_unused(i)))
        self._unsafe = None  # a pattern of the characters that are no piece of their own
        self._plain_safe = None  # the plain bytes that are a space or a piece of their own
        self.usable = (flag(spec, 5, True) and not flag(trainer, 24, False) and not charsmap
                       and SPACE in self.safe)

    def __call__(self, lines: list[str]) -> list[bool]:
        found: list[bool | None] = [None] * len(lines)
        if self.usable and lines:
            if self._plain is not None and self._plain[0] is not None:
                found = self._from_plain(lines)
            self._from_normalize(lines, found)
        left = [index for index, same in enumerate(found) if same is None]
        if left:
            decoded = self._decode(self._encode([lines[index] for index in left]))
            for index, text in zip(left, decoded):
                found[index] = text == lines[index]
        return found

    def _from_normalize(self, lines: list[str], found: list) -> None:
        """The lines' round trips from their normalized texts, all at once: the texts joined by
        ``\n`` (which the normalizer never writes: else nothing is decided here), rewritten as
        the decode writes them, cut again and compared; the lines it may not decide (the
        module's note) marked None."""
        chosen = [index for index, same in enumerate(found) if same is None]
        if len(chosen) < len(lines):  # (the rest decided by ``_from_plain``)
            some: list[bool | None] = [None] * len(chosen)
            self._from_normalize([lines[index] for index in chosen], some)
            for index, same in zip(chosen, some):
                found[index] = same
            return
        texts = self._sp.normalize(lines)
        whole = "\n".join(texts)
        if whole.count("\n") != len(lines) - 1:
            return
        joined = ("\n" + whole).replace("\n" + SPACE, "\n")[1:] if self.strips else whole
        decoded = joined.replace(SPACE, " ").split("\n")  # (strips: one leading ▁ of each)
        found[:] = map(str.__eq__, decoded, lines)
        if self._unsafe is None:  # a character that is no piece of its own
            self._unsafe = re.compile("[^\n%s]" % "".join(map(re.escape, sorted(self.safe))))
        starts = list(accumulate(map(len, texts), lambda at, size: at + size + 1, initial=0))
        undecided = {bisect_right(starts, match.start()) - 1
                     for match in self._unsafe.finditer(whole)}
        if "\n" + SPACE * 2 in "\n" + whole:  # a text starting ▁▁
            undecided.update(index for index, text in enumerate(texts)
                             if text.startswith(SPACE * 2))
        if SPACE in "".join(lines):
            undecided.update(index for index, line in enumerate(lines) if SPACE in line)
        for index in undecided:
            found[index] = None

    def _from_plain(self, lines: list[str]) -> list[bool | None]:
        """The round trips of the lines of plain bytes whose characters are each a piece of
        their own (the module's note), all lines' bytes joined by ``\n`` (no line holds one);
        None for the other lines."""
        import numpy as np

        plain, space = self._plain
        if self._plain_safe is None:
            safe = np.array([plain[b] and (space[b] or chr(b) in self.safe) for b in range(256)])
            self._plain_safe = safe
        codes = np.frombuffer("\n".join(lines).encode(), dtype=np.uint8)
        newline = codes == 10
        ends = np.append(np.flatnonzero(newline), len(codes))
        if len(ends) != len(lines):  # a line holding a line end: left to ``_from_normalize``
            return [None] * len(lines)
        starts = np.append(0, ends[:-1] + 1)
        spaces = codes == 32
        full = ends > starts
        same = np.ones(len(lines), dtype=bool)
        same[full] = ~(spaces[starts[full]] | spaces[ends[full] - 1])
        # the bytes that make their line lossy, or leave it to the library (a byte's line: the
        # first line end at or after it)
        lossy = np.flatnonzero((space[codes] & ~spaces & ~newline)
                               | np.append(spaces[1:] & spaces[:-1], False))
        same[np.searchsorted(ends, lossy)] = False
        taken = np.ones(len(lines), dtype=bool)
        taken[np.searchsorted(ends, np.flatnonzero(~self._plain_safe[codes] & ~newline))] = False
        found: list[bool | None] = same.tolist()
        for index in np.flatnonzero(~taken).tolist():
            found[index] = None
        return found
