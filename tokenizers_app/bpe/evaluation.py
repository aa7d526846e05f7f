"""Evaluating a tokenizer on a text: every metric of ``metrics`` in one pass over the text.

``evaluate(tokenizer, blocks)`` treats the blocks (a file's lines, or any cut of a text) as one
document, ``"".join(blocks)``, and gives the numbers of encoding that document whole with
``encode_ordinary``: the stored compression ratio is the one the tokenizer's own library gives on
the whole text. It streams the document by cutting it only where the tokenizer cannot join
across the cut (``document_pieces``):

- byte-level BPE: after a lone newline between two non-space characters (``"ab\\n" | "cd"``),
  which no pre-token of the named patterns crosses (``PreTokenizer.line_cuts``); a custom
  pattern is never cut. GPT-2 pre-tokenizes ``"\\n\\n"`` as one pre-token (one token), so the
  text is never cut between two newlines;
- every other tokenizer of the core (character-level BPE, the baselines) encodes each run of
  whitespace or of other characters on its own: it is cut after each newline.

The lossless rate is per line (a line ends after each ``"\\n"``), each line checked without its
line end: a corpus has no document separators, so its lines are the units checked with
``decode(encode(x)) == x``. The work per
piece is a few calls into C; the rest is done once per distinct item, weighted by its count: per
pre-token for byte-level BPE, per run of whitespace or of other characters for the others
(``totals.RunTotals``). Byte-level BPE with the gpt2 pattern and the compiled core is tallied by
one C scan of each piece's pre-tokens, with no encode of every occurrence
(``pretoken_tally.TallyTotals``); any other byte-level BPE encodes the pieces and counts their
pre-tokens (``pretoken_totals.PreTokenTotals``). Engines of other libraries (HF
``tokenizers``, ``sentencepiece``) bring their own ``evaluate`` (``tokenizers_app.engines``).

Plain twin: ``reference_evaluate`` in tests/bpe/reference.py, on the whole text at once.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator

from .eval_totals import BYTE_LEVEL_LINES, LINES, NONE, EvalTotals
from .inspection import counting_words
from .pretoken_tally import TallyTotals, compiled_tally
from .pretoken_totals import PreTokenTotals
from .totals import RunTotals

PIECE_CHARS = 1 << 16  # a byte-level piece grows to about this many characters before a cut


def evaluate(tokenizer, blocks: Iterable[str]) -> dict:
    """All metrics of ``tokenizer`` over the document ``"".join(blocks)`` (see the module
    docstring)."""
    return evaluate_totals(tokenizer, blocks).metrics(tokenizer)


def evaluate_totals(tokenizer, blocks: Iterable[str], words: Counter | None = None) -> EvalTotals:
    """The mergeable totals of ``tokenizer`` over ``"".join(blocks)``: those of two parts of a
    text cut where ``cut_rule(tokenizer)`` allows, merged, are the whole text's. ``words``,
    when given, gets the text's whitespace-separated words (``str.split``'s) added, from the
    same pass: counted on the way (``inspection.counting_words``), by the compiled tally's
    scan (byte-level BPE), or from the runs of character-level BPE that is not lowercased
    (``RunTotals.whitespace_words``)."""
    if tokenizer.algorithm == "byte_bpe":
        tally = compiled_tally(tokenizer, count_words=words is not None)
        totals = PreTokenTotals(tokenizer) if tally is None else TallyTotals(tokenizer, tally)
        if words is not None and tally is None:
            blocks = counting_words(blocks, words)
        lines = items = BlockPieces(blocks, tokenizer.pretokenizer.line_cuts)
    else:
        totals = RunTotals(tokenizer)
        if words is not None and not totals.by_words:
            blocks = counting_words(blocks, words)
        lines = items = LineCounter(blocks)
    for group in totals.groups(items):
        totals.add(group)
    found = totals.eval_totals(lines=lines.count)
    if words is not None and isinstance(totals, TallyTotals):
        words.update(totals.tally.words())
    elif words is not None and isinstance(totals, RunTotals) and totals.by_words:
        words.update(totals.whitespace_words())
    return found


def cut_rule(tokenizer) -> str:
    """Where a text may be cut for this core tokenizer without changing a token (see
    ``eval_totals.cut_allowed``)."""
    if tokenizer.algorithm == "byte_bpe":
        return BYTE_LEVEL_LINES if tokenizer.pretokenizer.line_cuts else NONE
    return LINES


class LineCounter:
    """The lines of a stream of blocks, each ending in ``"\\n"`` (the last one may not), counted
    as they pass: ``list(LineCounter(["a\\nb", "c\\n", "d"])) -> ["a\\n", "bc\\n", "d"]``."""

    def __init__(self, blocks: Iterable[str]):
        self.blocks, self.count = blocks, 0

    def __iter__(self) -> Iterator[str]:
        rest: list[str] = []
        for block in self.blocks:
            if not rest and block.find("\n") == len(block) - 1 and block:  # a line, as read
                self.count += 1
                yield block
                continue
            *whole, tail = block.split("\n")
            for line in whole:
                self.count += 1
                yield "".join(rest) + line + "\n"
                rest = []
            if tail:
                rest.append(tail)
        if rest:
            self.count += 1
            yield "".join(rest)


class BlockPieces:
    """``document_pieces(LineCounter(blocks), line_cuts)`` made from the blocks as they come,
    with no walk over each line: a piece ends at the first cut the same rule allows
    (``_CUT``) once it holds ``piece_chars`` characters; ``count`` is then the lines counted
    (each ``"\n"`` ends one; a last one may not end in it), once the pieces are read.
    ``list(BlockPieces(["a\n", "\nb\nc"], True, 1)) -> ["a\n\nb\n", "c"]``."""

    def __init__(self, blocks: Iterable[str], line_cuts: bool, piece_chars: int | None = None):
        self.blocks, self.line_cuts = blocks, line_cuts
        self.piece_chars = PIECE_CHARS if piece_chars is None else piece_chars
        self.count = 0

    def __iter__(self) -> Iterator[str]:
        parts: list[str] = []
        size, due, searched, newlines, last = 0, self.piece_chars, 0, 0, ""
        for block in self.blocks:
            if not block:
                continue
            newlines, last = newlines + block.count("\n"), block
            parts.append(block)
            size += len(block)
            if size < due or not self.line_cuts:
                continue
            text = "".join(parts)
            cut = _CUT.search(text, max(searched, self.piece_chars - 1))
            if cut is None:  # look again once it holds twice as much: no quadratic rescans
                searched, due = len(text) - 2, 2 * len(text)
            else:
                yield text[:cut.end()]
                text = text[cut.end():]
                searched, due = 0, self.piece_chars
            parts, size = [text], len(text)
        self.count = newlines + (not last.endswith("\n") if last else 0)
        text = "".join(parts)
        if text:
            yield text


_CUT = re.compile(r"\S\n(?=\S)")  # a lone newline between two non-space characters


def document_pieces(lines: Iterable[str], line_cuts: bool,
                    piece_chars: int = PIECE_CHARS) -> Iterator[str]:
    """Consecutive lines joined into pieces that pre-tokenize as they do in the whole text: a
    piece ends (once it holds ``piece_chars`` characters) only between a line ending in a
    non-space character and a newline, and one starting with a non-space character, and only
    when ``line_cuts`` says the pattern allows it.
    ``list(document_pieces(["a\\n", "\\n", "b\\n", "c"], True, 1)) -> ["a\\n\\nb\\n", "c"]``."""
    piece: list[str] = []
    size = 0
    for line in lines:
        if (size >= piece_chars and line_cuts and line[:1] and not line[0].isspace()
                and _ends_safely(piece[-1])):
            yield "".join(piece)
            piece, size = [], 0
        piece.append(line)
        size += len(line)
    if piece:
        yield "".join(piece)


def _ends_safely(line: str) -> bool:
    """A lone newline after a non-space character: ``"ab\\n"``, not ``"a \\n"`` nor ``"\\n"``."""
    return len(line) >= 2 and line[-1] == "\n" and not line[-2].isspace()
