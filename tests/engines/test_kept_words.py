"""A sandboxed evaluation's words kept in the child across its batches (``kept_words``): the
totals are those of one process, whether the words cross at the end, early (a child past its
bound of words, or retiring), and a child that lost them refuses in words."""

from __future__ import annotations

import pytest

from tests.engines.test_engines import KINDS
from tests.engines.test_eval_fast import VARIED
from tests.real_text import django_messages
from tokenizers_app.bpe.eval_totals import EvalTotals
from tokenizers_app.engines import evaluation, kept_words, read_engine_files
from tokenizers_app.engines.document_texts import document_texts
from tokenizers_app.engines.evaluation import library_totals
from tokenizers_app.engines.totals_wire import from_wire

_LINES = django_messages("multi")[:60_000].splitlines(keepends=True)
TEXT = VARIED + "\n\n" + "\n".join("".join(_LINES[k:k + 20]) for k in range(0, len(_LINES), 20)) \
    + "\n" + VARIED


def sandboxed(engine, cpu_seconds: int = 60):
    from tokenizers_app.engines.registry import engine_digest
    from tokenizers_app.engines.remote import SandboxedEngine
    from tokenizers_app.engines.sandbox import EnginePool, Limits
    from tokenizers_app.engines.untrusted import image

    pool = EnginePool(1, Limits(1024**3, cpu_seconds, 60), 60)
    return SandboxedEngine(image(engine), lambda: pool, engine_digest(engine), 60), pool


@pytest.mark.parametrize("kind", ["sentencepiece-unigram", "bert-wordpiece"])
def test_the_child_keeps_the_words_and_the_totals_are_one_process(kind, monkeypatch):
    monkeypatch.setattr(evaluation, "BATCH_CHARS", 5_000)  # (many batches)
    engine = read_engine_files(KINDS[kind]())
    mine, pool = sandboxed(engine)
    try:
        asked = []
        ask = mine._ask
        monkeypatch.setattr(mine, "_ask", lambda op, **f: asked.append((op, f)) or ask(op, **f))
        found = library_totals(mine, [TEXT])
    finally:
        pool.close()
    batches = [f for op, f in asked if op == "totals"]
    assert len(batches) > 5 and [f["number"] for f in batches] == list(range(1, len(batches) + 1))
    assert [op for op, _ in asked][-1] == "flush"
    assert found.comparable() == library_totals(engine, [TEXT]).comparable()
    assert sum(n for n, _ in found.words.values()) == found.counts["own_words"] > 1000


def test_words_past_the_bound_cross_with_a_batch(monkeypatch):
    """In the child's own code: past ``KEPT_WORDS`` the batch's answer carries the words and
    the session starts again, so the numbers start again at 1."""
    monkeypatch.setattr(kept_words, "KEPT_WORDS", 50)
    engine = read_engine_files(KINDS["sentencepiece-unigram"]())
    texts = list(document_texts([TEXT], 1 << 20))
    one = library_totals(engine, [TEXT])
    merged, number, flushed, memo = EvalTotals(), 0, 0, {}
    for text in texts:
        number += 1
        wire = kept_words.batch(engine, [text], memo, "s", number)
        if wire.get("flushed"):
            number, flushed = 0, flushed + 1
        merged.merge(from_wire(wire))
    merged.merge(from_wire(kept_words.flush("s", number)))
    assert flushed > 1
    assert merged.comparable() == one.comparable()


def test_a_retiring_child_sends_the_words_with_its_answer(monkeypatch):
    """A child near its processor-time limit retires after its answer: the words it kept cross
    with that answer, and the next child counts on; the totals are one process's."""
    engine = read_engine_files(KINDS["sentencepiece-unigram"]())
    mine, pool = sandboxed(engine, cpu_seconds=1)  # retires once past 0.5 s (starts: 0.1 s)
    flushed = set()
    try:
        call = pool.call

        def watched(*args, **fields):
            answer = call(*args, **fields)
            flushed.add(answer.get("totals", {}).get("flushed", False))
            return answer

        pool.call = watched
        monkeypatch.setattr(evaluation, "BATCH_CHARS", 20_000)  # (about 0.02 s each; 0.8 s)
        found = library_totals(mine, [TEXT * 40])
    finally:
        pool.close()
    assert True in flushed  # some answer carried the words of a retiring child
    assert found.comparable() == library_totals(engine, [TEXT * 40]).comparable()


def test_a_child_that_lost_the_words_refuses_in_words():
    engine = read_engine_files(KINDS["sentencepiece-unigram"]())
    mine, pool = sandboxed(engine)
    try:
        mine.documents_totals(["a b\n"], "s1")
        with pytest.raises(ValueError, match="words were lost"):
            mine._ask("totals", texts=["c\n"], session="s1", number=3)  # not the next one
        with pytest.raises(ValueError, match="words were lost"):
            mine._ask("flush", session="s2", number=1)  # a session never begun here
        assert from_wire(mine._ask("flush", session="s3", number=0)["totals"]).words == {}
    finally:
        pool.close()


def test_a_failed_evaluation_leaves_no_session_and_the_next_one_is_whole(monkeypatch):
    """A batch that fails midway ends its session without a flush: the engine no longer
    numbers it, and the next evaluation on the same child gives one process's totals."""
    monkeypatch.setattr(evaluation, "BATCH_CHARS", 5_000)  # (many batches)
    engine = read_engine_files(KINDS["sentencepiece-unigram"]())
    mine, pool = sandboxed(engine)
    try:
        ask, asked = mine._ask, []

        def failing(op, **fields):
            asked.append(op)
            if op == "totals" and len(asked) == 3:
                raise ValueError("the library failed on this batch")
            return ask(op, **fields)

        monkeypatch.setattr(mine, "_ask", failing)
        with pytest.raises(ValueError, match="failed on this batch"):
            library_totals(mine, [TEXT])
        assert mine._sessions == {}
        monkeypatch.setattr(mine, "_ask", ask)
        found = library_totals(mine, [TEXT])
        assert mine._sessions == {}
    finally:
        pool.close()
    assert found.comparable() == library_totals(engine, [TEXT]).comparable()
