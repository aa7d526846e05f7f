"""A batch's totals as a sandbox child sends them (``totals_wire``): the same totals back, and
an answer whose columns do not match refused."""

from __future__ import annotations

import json

import pytest

from tests.engines.test_engines import KINDS
from tests.engines.test_eval_fast import VARIED, docs_of
from tests.real_text import django_messages
from tokenizers_app.bpe.eval_totals import EvalTotals
from tokenizers_app.engines import read_engine_files
from tokenizers_app.engines.evaluation import documents_totals, documents_wire
from tokenizers_app.engines.totals_wire import from_wire, to_wire


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_batchs_totals_cross_whole(kind):
    engine = read_engine_files(KINDS[kind]())
    texts = docs_of(VARIED) + [django_messages("multi")[:50_000], "", "\u3000x\u2028"]
    totals = documents_totals(engine, texts, {})
    assert len(totals.words) > 100 and any(c for _, c in totals.words.values()) \
        and not all(c for _, c in totals.words.values())
    back = from_wire(json.loads(json.dumps(to_wire(totals)).encode("ascii")))
    assert back.comparable() == totals.comparable()
    assert list(back.words) == list(totals.words) and back.seconds == totals.seconds
    memo: dict = {}
    wire = documents_wire(engine, texts, memo)  # a child's answer, made from the columns
    assert from_wire(wire).comparable() == totals.comparable()
    assert wire["words"] == to_wire(totals)["words"] and len(memo["words"]) == len(back.words)


def test_no_words_cross_as_none():
    assert from_wire(to_wire(EvalTotals())).comparable() == EvalTotals().comparable()


@pytest.mark.parametrize("change", [
    lambda wire: wire.update(covered=wire["covered"][:-1]),
    lambda wire: wire.update(covered=wire["covered"][:-1] + "2"),
    lambda wire: wire.update(word_counts=wire["word_counts"] + [1]),
    lambda wire: wire["ids"][1].pop(),
])
def test_columns_that_do_not_match_are_refused(change):
    totals = EvalTotals()
    totals.words = {"a": [2, True], "b": [1, False]}
    totals.ids.update({5: 2, 7: 1})
    wire = to_wire(totals)
    change(wire)
    with pytest.raises(ValueError):
        from_wire(wire)
