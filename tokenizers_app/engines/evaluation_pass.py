"""An evaluation's one pass over its text: the totals (``registry.evaluate_totals``) and the
text's whitespace-separated words with their counts, from which the compare page's most
frequent words are taken. A library kind's totals hold those words already (its word coverage
is over them: ``registry.counts_words``); the core's kinds count them on the way
(``bpe.inspection.counting_words``) or from the runs they count (character-level BPE), so the
corpus is read once either way."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from ..bpe.eval_totals import EvalTotals
from .registry import evaluate_totals


def totals_and_words(tokenizer, blocks: Iterable[str]) -> tuple[EvalTotals, Counter[str]]:
    """``(totals, words)`` of ``"".join(blocks)``: ``words`` counts each whitespace-separated
    word (Unicode White_Space for a library kind, as its coverage counts them; ``str.split``'s
    for the core's kinds)."""
    words: Counter[str] = Counter()
    return evaluate_totals(tokenizer, blocks, words), words
