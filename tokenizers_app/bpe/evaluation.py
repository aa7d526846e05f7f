"""Evaluating a tokenizer on a text: every metric of ``metrics`` in one pass over its lines.

``evaluate(tokenizer, lines)`` encodes each line with ``encode_ordinary`` (lines as given: a
file's lines keep their ``"\\n"``) and returns a JSON-able dict of the metrics (``metrics.py``
defines each, with its unit). The work per line is a few calls into C; the rest is done once per
distinct item, weighted by its count: per pre-token for byte-level BPE
(``pretoken_totals.PreTokenTotals``), per run of whitespace or of other characters for every other
tokenizer, which must encode such runs independently of each other (``totals.RunTotals``).

Plain twin: ``reference_evaluate`` in tests/bpe/reference.py, line by line.
"""

from __future__ import annotations

from collections.abc import Iterable

from .pretoken_totals import PreTokenTotals
from .totals import RunTotals


def evaluate(tokenizer, lines: Iterable[str]) -> dict:
    """All metrics of ``tokenizer`` over a stream of lines (see the module docstring)."""
    totals = (PreTokenTotals(tokenizer) if tokenizer.algorithm == "byte_bpe"
              else RunTotals(tokenizer))
    for group in totals.groups(lines):
        totals.add(group)
    return totals.result()
