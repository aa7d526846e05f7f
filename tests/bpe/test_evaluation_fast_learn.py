"""Byte-level BPE's evaluation learns a fresh pre-token's ids from the merges of its own bytes
(``PreTokenTotals._learn``); the old path cut them from its line's ids
(``_learn_from_lines``). Both give the same totals on a varied text (CJK, emoji, whitespace
runs, contractions, control characters), for a named pattern and a pattern of the
tokenizer's own; and a token that crosses a pre-token is still refused. (Both run on
``PreTokenTotals``: the compiled tally that the gpt2 pattern uses otherwise is switched off,
see test_pretoken_tally.py.)"""

from __future__ import annotations

import pytest

from tests.bpe.corpora import SAMPLES
from tokenizers_app.bpe import evaluation, train_bpe
from tokenizers_app.bpe.pretoken_totals import PreTokenTotals
from tokenizers_app.engines.registry import evaluate_totals

TRAIN = "".join(SAMPLES.values())[:20_000]
VARIED = (SAMPLES["english"][:600] + "\n\n" + SAMPLES["chinese"][:80] + "\n東京 🍕 café\u3000end"
          + "\n  two  spaces\t\ttabs   \n\n\nI'm don't you'll 'quoted' x2y 3.14 ...\n"
          + "Ｆｕｌｌ ﬁ e\u0301 \u00a0nbsp\u200bzero \ufeffbom 한국어 \U0001F468\u200d\U0001F469\n"
          + "\x01\x02 ☃☃☃\r\n\r\n" + "ab" * 40 + "\nLast line, no newline")


@pytest.mark.parametrize("pattern", ["gpt2", "gpt4"])
def test_learning_from_merges_equals_learning_from_lines(pattern, monkeypatch):
    tokenizer = train_bpe([TRAIN], 330, pattern=pattern).tokenizer()
    lines = VARIED.splitlines(keepends=True)
    monkeypatch.setattr(evaluation, "compiled_tally", lambda tokenizer, **_: None)
    fast = evaluate_totals(tokenizer, lines)
    monkeypatch.setattr(PreTokenTotals, "_learn",
                        lambda self, *args: self._learn_from_lines(*args))
    old = evaluate_totals(tokenizer, lines)
    assert fast.comparable() == old.comparable()
    assert fast.counts["split_words"] > 0 and fast.counts["tokens"] > 300


def test_tokens_that_cross_pre_tokens_are_refused(monkeypatch):
    tokenizer = train_bpe([TRAIN], 330, pattern="gpt2").tokenizer()
    totals = PreTokenTotals(tokenizer)
    monkeypatch.setattr(totals, "encode", lambda lines: [[0]] * len(lines))  # one token a line
    totals.add(["hello world\n"])
    with pytest.raises(ValueError, match="crosses a pre-token"):
        totals.final_counts()
