"""The fast paths of evaluation give exactly the old path's totals: every library kind's
``span_columns`` (SentencePiece: ids encoded in one call, spans from its pieces' lengths and the
normalizer's offsets; Hugging Face: the library's offsets as columns) equals the columns of its
``token_spans``, document by document, and the totals equal the old path's; and
``count_split_words`` (by bisection) equals the walk it replaced, on a varied text: CJK, emoji,
whitespace runs, characters the model never saw, NFKC-changed characters, control
characters."""

from __future__ import annotations

import pytest

from tests.bpe.corpora import SAMPLES
from tests.engines.test_engines import KINDS
from tokenizers_app.engines import read_engine_files
from tokenizers_app.engines.evaluation import count_split_words, documents, documents_totals
from tokenizers_app.engines.spans import span_columns

VARIED = (SAMPLES["english"][:400] + "\n\n" + SAMPLES["chinese"][:80] + "\n東京 🍕 café\u3000end"
          + "\n  two  spaces\t\ttabs   \n\n\n"
          + "Ｆｕｌｌ ﬁ ﬀ ㎏ ½ ① Ⅻ e\u0301 \u00a0nbsp\u200bzero \ufeffbom\n"
          + "한국어 \U0001F468\u200d\U0001F469 ☃☃☃ \x01\x02 ⅷ\r\n\r\n"
          + "ℌ𝔢𝔩𝔩𝔬 𝟙𝟚𝟛 … “quoted” — dash\n\n" + "ab" * 50 + "\nLast line, no newline")


def docs_of(text: str) -> list[str]:
    return ["".join(doc) for doc in documents(text.splitlines(keepends=True))]


def walked_split_words(words, spans) -> int:
    """The walk ``count_split_words`` replaced (``metrics.split_flags``, counted)."""
    split, first = 0, 0
    for start, end in words:
        while first < len(spans) and spans[first][2] <= start:
            first += 1
        split += (first + 1 < len(spans) and spans[first][1] < end
                  and spans[first + 1][1] < end)
    return split


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_span_columns_equal_the_token_spans(kind):
    engine = read_engine_files(KINDS[kind]())
    docs = docs_of(VARIED) + ["", "\n", " ", "☃", "\x01"]
    assert engine.span_columns(docs) == [span_columns(engine.token_spans(doc, ()))
                                         for doc in docs]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_totals_equal_the_old_path(kind):
    engine = read_engine_files(KINDS[kind]())

    class OldPath:  # the engine without its fast paths: every span from the offset mapping
        def __getattr__(self, name):
            if name in ("span_columns", "batch_columns"):
                raise AttributeError(name)
            return getattr(engine, name)

    docs = ["".join(doc) for doc in documents(VARIED.splitlines(keepends=True))]
    fast = documents_totals(engine, docs, {})
    old = documents_totals(OldPath(), docs, {})
    assert fast.comparable() == old.comparable()
    assert fast.counts["split_words"] > 0 and fast.counts["tokens"] > 100


def test_split_words_by_bisection_equal_the_walk():
    spans = [(1, 0, 3), (2, 3, 3), (3, 3, 5), (4, 5, 9), (5, 12, 13), (6, 13, 20)]
    words = [(0, 2), (0, 5), (3, 4), (4, 5), (5, 9), (6, 8), (9, 12), (10, 14), (12, 13),
             (13, 25), (21, 22)]
    ids, starts, ends = span_columns(spans)
    for some in (words, words[:1], [], words[3:]):
        assert count_split_words(some, starts, ends) == walked_split_words(some, spans)
    assert count_split_words(words, [0], [3]) == 0


@pytest.mark.parametrize("kind", ["sentencepiece-unigram", "unigram"])
def test_a_full_memo_is_emptied_before_it_is_read(kind, monkeypatch):
    """Past ``COVERED_KEPT`` remembered words or lines the memo is emptied; a word or line of
    the batch that was remembered is then checked again (it raised ``KeyError`` on 100 MB)."""
    from tokenizers_app.engines import evaluation, running_words

    engine = read_engine_files(KINDS[kind]())
    docs = ["".join(doc) for doc in documents(VARIED.splitlines(keepends=True))]
    whole = documents_totals(engine, docs, {})
    monkeypatch.setattr(evaluation, "COVERED_KEPT", 2)  # (the lines')
    monkeypatch.setattr(running_words, "COVERED_KEPT", 2)  # (the words')
    memo: dict = {}
    first = documents_totals(engine, docs[:2], memo)
    assert len(memo["words"]) > 2 and len(memo["lines"]) > 2
    again = documents_totals(engine, docs[1:2], memo)  # all remembered, and the memo is full
    rest = documents_totals(engine, docs[2:], memo)
    assert first.merge(rest).comparable() == whole.comparable()
    assert again.counts["lossless_lines"] > 0


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_batch_columns_are_the_span_columns_joined(kind):
    """Every library kind's ``batch_columns``: each text's ``span_columns``, its byte spans
    moved to where the text starts in the texts joined."""
    engine = read_engine_files(KINDS[kind]())
    docs = docs_of(VARIED) + ["", "\n", " ", "☃", "\x01"]
    id_lists, ids, starts, ends, places = engine.batch_columns(docs)
    assert places == [sum(len(doc.encode()) for doc in docs[:k]) for k in range(len(docs))]
    joined = ([], [], [])
    for place, (doc_ids, doc_starts, doc_ends) in zip(places, engine.span_columns(docs)):
        joined[0].extend(doc_ids)
        joined[1].extend(place + start for start in doc_starts)
        joined[2].extend(place + end for end in doc_ends)
    assert [list(i) for i in id_lists] == [list(c[0]) for c in engine.span_columns(docs)]
    assert (ids.tolist(), starts.tolist(), ends.tolist()) == joined
