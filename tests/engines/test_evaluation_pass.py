"""An evaluation's one pass (``engines.evaluation_pass.totals_and_words``): the totals equal
those of ``evaluate_totals`` alone, and the words counted are the text's whitespace-separated
words, taken from a library kind's totals and counted on the way for the core's kinds."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.engines.test_eval_merge import ALL_KINDS, CORPUS, tokenizer_of
from tokenizers_app.bpe.baselines import whitespace_words
from tokenizers_app.engines.evaluation_pass import totals_and_words
from tokenizers_app.engines.registry import counts_words, evaluate_totals

# a word joined across blocks, and separators Python splits on but Unicode does not count as
# white space (U+001C-U+001F)
TEXT = CORPUS + "\nrecord\x1eseparated and\u00a0no-break"
BLOCKS = [TEXT[i:i + 37] for i in range(0, len(TEXT), 37)]


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_one_pass_gives_the_totals_and_the_whitespace_words(kind):
    tokenizer = tokenizer_of(kind)
    totals, words = totals_and_words(tokenizer, BLOCKS)
    assert totals.comparable() == evaluate_totals(tokenizer, BLOCKS).comparable()
    if counts_words(tokenizer):  # a library kind: its coverage's words, on Unicode White_Space
        assert words == Counter(whitespace_words(TEXT))
        assert words["record\x1eseparated"] == 1
    else:
        assert words == Counter(TEXT.split())
        assert words["record"] == words["separated"] == 1
    assert words["and"] >= 1 and words["no-break"] == 1
