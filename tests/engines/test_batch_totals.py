"""``engines.batch_totals`` (a batch counted at once with numpy) gives the numbers of the
document-by-document path: its words are ``WORD_RE``'s, its split words the bisection's, its id
counts a ``Counter``'s; where it does not apply (spans out of order, no numpy) the evaluation
counts per document and the totals stay the same."""

from __future__ import annotations

import gc
from collections import Counter

import pytest

from tests.engines.test_engines import KINDS
from tests.engines.test_eval_fast import VARIED, docs_of
from tokenizers_app.bpe.baselines import WORD_RE
from tokenizers_app.bpe.eval_totals import EvalTotals
from tokenizers_app.bpe.evaluation import LineCounter
from tokenizers_app.bpe.metrics import word_spans
from tokenizers_app.engines import batch_totals, read_engine_files
from tokenizers_app.bpe.totals import line_text
from tokenizers_app.engines.evaluation import (count_split_words, documents, documents_totals,
                                                line_counts)

ODD = "a\x1cb c\x1fd\u2029e\u0085f\u200bg\u180eh\ufeffi \u3000 j\u00a0k\u1680l\u205fm"


def test_the_whitespace_list_is_word_res():
    """Every character ``WORD_RE`` does not take into a word is listed, and only those."""
    found = {chr(c) for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF
             and WORD_RE.fullmatch(chr(c)) is None}
    assert found == set(batch_totals.WHITESPACE)


@pytest.mark.parametrize("text", [VARIED, ODD, "", " ", "x", " ab  é\n", "\u3000\u3000a"])
def test_word_bounds_are_the_word_spans(text):
    starts, ends = batch_totals.word_bounds(text.encode())
    assert list(zip(starts.tolist(), ends.tolist())) == word_spans(text)


def test_split_count_equals_the_bisection_or_declines_spans_out_of_order():
    words = [(0, 2), (0, 5), (3, 4), (4, 5), (5, 9), (6, 8), (9, 12), (10, 14), (12, 13)]
    starts, ends = [0, 3, 3, 5, 12, 13], [3, 3, 5, 9, 13, 20]
    word_starts, word_ends = zip(*words)
    assert batch_totals.split_count(word_starts, word_ends, starts, ends) == \
        count_split_words(words, starts, ends) == 2
    assert batch_totals.split_count(word_starts, word_ends, [0, 4, 3], [3, 4, 5]) is None
    assert batch_totals.split_count([], [], [], []) == 0


def test_id_counts_and_texts_with():
    assert batch_totals.id_counts([5, 1, 5, 0]) == Counter([5, 1, 5, 0])
    assert batch_totals.id_counts([]) == Counter()
    assert batch_totals.texts_with([True, False, False, True], [0, 0, 2, 3]) == [1, 3]


@pytest.mark.parametrize("kind", ["sentencepiece-bpe", "sentencepiece-unigram"])
def test_the_fallbacks_give_the_same_totals(kind, monkeypatch):
    """Without numpy, or with spans out of order, the batch is counted document by document."""
    engine = read_engine_files(KINDS[kind]())
    docs = ["".join(doc) for doc in documents(LineCounter([VARIED + ODD + "\n\n" + VARIED]))]  # lines end at \n
    fast = documents_totals(engine, docs, {})
    assert fast.counts["split_words"] > 0 and fast.counts["unknown_chars"] + \
        fast.counts["byte_fallback_chars"] > 0
    monkeypatch.setattr(batch_totals, "split_count", lambda *spans: None)
    assert documents_totals(engine, docs, {}).comparable() == fast.comparable()
    monkeypatch.setattr(batch_totals, "numpy_found", lambda: False)
    assert documents_totals(engine, docs, {}).comparable() == fast.comparable()


def test_batch_columns_are_the_span_columns_joined():
    engine = read_engine_files(KINDS["sentencepiece-bpe"]())
    docs = docs_of(VARIED) + ["", "☃", "\x01"]
    id_lists, ids, starts, ends, places = engine.batch_columns(docs)
    assert ids.tolist() == [i for doc in id_lists for i in doc]
    assert places == [sum(len(doc.encode()) for doc in docs[:k]) for k in range(len(docs))]
    each = engine.span_columns(docs)
    assert starts.tolist() == [s + place for (_, doc_starts, _), place in zip(each, places)
                               for s in doc_starts]
    assert ends.tolist() == [e + place for (_, _, doc_ends), place in zip(each, places)
                             for e in doc_ends]


def test_the_collector_is_paused_during_a_batch_and_restored():
    engine = read_engine_files(KINDS["sentencepiece-unigram"]())
    docs = ["".join(doc) for doc in documents(VARIED.splitlines(keepends=True))]
    seen = []
    original = engine.batch_columns

    def spy(texts):
        seen.append(gc.isenabled())
        return original(texts)

    engine.batch_columns = spy
    assert gc.isenabled()
    documents_totals(engine, docs, {})
    assert seen == [False] and gc.isenabled()
    gc.disable()
    try:
        documents_totals(engine, docs, {})
        assert not gc.isenabled()  # left as it was
    finally:
        gc.enable()


@pytest.mark.parametrize("text", [VARIED, "", "\n", "a", "a\r", "x\r\r\nx\r\nx\nx\r\n\r\n",
                                  "b\n\nb\r", "a\r\n" * 3 + "a"])
def test_line_counts_are_the_lines_without_their_ends(text):
    lines = list(LineCounter([text]))
    assert line_counts(text) == Counter(map(line_text, lines))


@pytest.mark.parametrize("kind", ["sentencepiece-bpe", "sentencepiece-unigram"])
def test_a_sandboxed_engine_counts_the_same_in_its_child(kind):
    """The production path: the child under its memory limit (numpy imported there) gives the
    totals of the engine in this process."""
    from tokenizers_app.engines.registry import engine_digest
    from tokenizers_app.engines.remote import SandboxedEngine
    from tokenizers_app.engines.sandbox import EnginePool, Limits
    from tokenizers_app.engines.untrusted import image

    engine = read_engine_files(KINDS[kind]())
    docs = ["".join(doc) for doc in documents(LineCounter([VARIED + ODD + "\n\n" + VARIED]))]
    pool = EnginePool(1, Limits(512 * 1024**2, 60, 60))
    try:
        sandboxed = SandboxedEngine(image(engine), lambda: pool, engine_digest(engine), 60)
        assert sandboxed.documents_totals(docs).comparable() == \
            documents_totals(engine, docs, {}).comparable()
    finally:
        pool.close()


def test_merge_part_equals_merge():
    engine = read_engine_files(KINDS["sentencepiece-unigram"]())
    docs = ["".join(doc) for doc in documents(LineCounter([VARIED + ODD + "\n\n" + VARIED]))]
    parts = [documents_totals(engine, docs[:3], {}), documents_totals(engine, docs[2:], {}),
             documents_totals(engine, docs[1:4], {})]
    merged = EvalTotals()
    for part in parts:
        merged.merge(part)
    taken = EvalTotals()
    for part in parts:
        batch_totals.merge_part(taken, EvalTotals.from_json(part.to_json()))
    assert taken.comparable() == merged.comparable()
    assert taken.seconds == pytest.approx(merged.seconds)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_library_totals_add_the_words_as_merging_each_batch_does(kind, monkeypatch):
    """In one process ``library_totals`` counts each batch's words at once (``memo["into"]``,
    ``running_words``): the same words, counts, coverage and order as each batch's totals
    merged (``merge_part``), over batches of a few documents (words met again, words new),
    and the words asked for get them with their counts."""
    from tokenizers_app.engines import evaluation

    engine = read_engine_files(KINDS[kind]())
    text = (VARIED + "\n\n" + VARIED.upper() + "\n\n" + ODD + "\n\n") * 2 + "tail words\n"
    blocks = text.splitlines(keepends=True)
    monkeypatch.setattr(evaluation, "BATCH_CHARS", 300)
    words = Counter()
    found = evaluation.library_totals(engine, blocks, words)
    merged, memo = EvalTotals(), {}
    parts = list(evaluation.batches(documents(LineCounter(blocks)), most=300))
    for batch in parts:
        batch_totals.merge_part(merged, documents_totals(engine, ["".join(doc) for doc in batch],
                                                         memo))
    assert len(parts) > 4
    assert found.comparable() == merged.comparable()
    assert list(found.words.items()) == list(merged.words.items())
    assert any(covered for _, covered in found.words.values())
    assert words == {word: count for word, (count, _) in merged.words.items()}
