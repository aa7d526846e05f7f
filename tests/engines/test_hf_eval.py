"""The Hugging Face engine's fast paths of evaluation give exactly the plain path's answers:
byte pieces' spans taken as they come when spreading them would change nothing (and spread
when it would), and each word's and line's ids derived from the documents' encoding where the
pipeline makes them the same (and asked of the library where it does not)."""

from __future__ import annotations

import json
import random
import re

import pytest

from tests.engines.test_engines import KINDS
from tests.engines.test_eval_fast import VARIED, docs_of
from tokenizers_app.engines import read_engine_files
from tokenizers_app.engines.hf import _one_byte_each
from tokenizers_app.engines.hf_parts import LineParts, line_rule
from tokenizers_app.engines.spans import span_columns


def test_byte_pieces_of_one_byte_each_in_order_need_no_spreading():
    bytes_ = frozenset({1, 2})
    assert _one_byte_each([5, 1, 2, 5], [0, 1, 2, 3], [1, 2, 3, 4], bytes_)
    assert _one_byte_each([5, 6], [0, 1], [1, 3], bytes_)  # no byte piece
    assert not _one_byte_each([1, 2, 1], [0, 0, 0], [3, 3, 3], bytes_)  # one character's bytes
    assert not _one_byte_each([1, 2], [1, 0], [2, 1], bytes_)  # out of order
    assert not _one_byte_each([1, 2], [0, 0], [1, 1], bytes_)  # one span shared


def test_llama_columns_equal_the_spread_spans_with_and_without_multibyte_fallback():
    """A Llama-style BPE spells a newline and a control character with one byte piece each (no
    spreading needed) and an unseen CJK character with three sharing its span (spread)."""
    engine = read_engine_files(KINDS["llama-bpe"]())
    docs = docs_of(VARIED) + ["a\nb\x01\x02c\n", "\U0001F468\u200d\n\x01", "▁\n\n"]
    assert any(engine.byte_ids.intersection(engine.encode_ordinary(doc)) for doc in docs)
    assert engine.span_columns(docs) == [span_columns(engine.token_spans(doc, ()))
                                         for doc in docs]


TRICKY = ["first line\n  indented  twice \n", "\n", " starts with a space\nno_space\n",
          "a ▁literal▁mark and  ▁ \r\nwindows line\r\n\n", "tabs\tonly\there\n \n",
          "Café, naïve — 東京 x\n\u3000wide space\x01ctrl last\n", "▁\n▁x ▁\nend"]


def _line_texts(docs: list[str]) -> list[str]:
    from tokenizers_app.bpe.totals import line_text

    return list(dict.fromkeys(line_text(line) for doc in docs
                              for line in doc.splitlines(keepends=True)))


@pytest.mark.parametrize("kind", ["llama-bpe", "bert-wordpiece", "unigram"])
def test_lines_from_their_documents_equal_the_library(kind):
    engine = read_engine_files(KINDS[kind]())
    assert engine._parts is not None  # every kind here has a pipeline that allows it
    docs = docs_of(VARIED) + TRICKY + ["x", " y z", ""]
    lines = _line_texts(docs) + ["not a line of them", "word", " "]
    asked = []
    library = engine._parts.joined
    engine._parts.joined = lambda texts: asked.extend(texts) or library(texts)
    engine.span_columns(docs)
    assert engine.encode_parts(lines) == engine.encode_ordinary_batch(lines)
    assert "not a line of them" in asked  # not a line: asked whole
    if kind == "bert-wordpiece":  # the documents' ids alone: only the strangers are asked
        assert set(asked) == {"not a line of them", "word"}
    else:  # a line is asked whole only when it has no two spaces (its first and last words)
        assert [line for line in lines[:-3] if line.count(" ") >= 2 and line in asked] == []
    assert engine.encode_parts(lines[::-1]) == engine.encode_ordinary_batch(lines[::-1])


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("kind", ["llama-bpe", "bert-wordpiece", "unigram"])
def test_lines_of_random_documents_equal_the_library(kind, seed):
    """Documents of spaces, marks, tabs, carriage returns, newlines and a few letters in any
    order: each line's ids from its document equal the library's."""
    engine = read_engine_files(KINDS[kind]())
    rng = random.Random(seed)
    alphabet = [" ", " ", "▁", "\t", "\r", "\n", "\n", "a", "b", "the", "é", "東", ".", "\x01"]
    docs = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 40)))
            for _ in range(300)]
    engine.span_columns(docs)
    lines = _line_texts(docs)
    assert engine.encode_parts(lines) == engine.encode_ordinary_batch(lines)
    texts = [doc.replace("\n", "") for doc in docs]  # a word, a line, a line's first word
    assert engine._parts.joined(texts) == engine.encode_ordinary_batch(texts)
    pieces = list(dict.fromkeys(piece for doc in docs for piece in re.split("[ \n]", doc)))
    words = pieces + [" " + piece for piece in pieces] + ["▁" + piece for piece in pieces]
    assert engine.encode_parts(words) == engine.encode_ordinary_batch(words)


@pytest.mark.parametrize("change", [
    lambda doc: doc.update(normalizer={"type": "Prepend", "prepend": "▁"}),
    lambda doc: doc["added_tokens"].append({**doc["added_tokens"][0], "id": 10_000,
                                            "content": "ab", "special": False}),
    lambda doc: doc.update(truncation={"direction": "Right", "max_length": 5, "strategy":
                                       "LongestFirst", "stride": 0}),
    lambda doc: doc["pre_tokenizer"].update(split=False),
])
def test_a_pipeline_that_does_not_allow_it_asks_the_library_for_every_line(change):
    doc = json.loads(KINDS["llama-bpe"]()["tokenizer.json"])
    change(doc)
    engine = read_engine_files({"tokenizer.json": json.dumps(doc).encode()})
    assert engine._parts is None
    docs = docs_of(VARIED) + TRICKY
    engine.span_columns(docs)
    lines = _line_texts(docs)
    assert engine.encode_parts(lines) == engine.encode_ordinary_batch(lines)


def test_the_rules_read_from_the_pipeline():
    meta = {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "first", "split": True}
    special = [{"content": "<s>", "special": True}]
    assert line_rule({"pre_tokenizer": meta, "added_tokens": special}) == ("mark", "▁")
    assert line_rule({"pre_tokenizer": {**meta, "split": False}}) is None
    assert line_rule({"pre_tokenizer": meta, "normalizer": {"type": "Lowercase"}}) is None
    assert line_rule({"pre_tokenizer": meta, "model": {"dropout": 0.1}}) is None
    bert = {"pre_tokenizer": {"type": "BertPreTokenizer"}}
    assert line_rule({**bert, "normalizer": {"type": "Sequence", "normalizers": [
        {"type": "NFD"}, {"type": "Lowercase"}, {"type": "StripAccents"}]}}) == ("whitespace", "")
    assert line_rule({**bert, "normalizer": {"type": "Sequence", "normalizers": [
        {"type": "NFD"}, {"type": "Replace", "pattern": {"String": "\n"}, "content": "x"}]}}) \
        is None
    assert line_rule({**bert, "padding": {"length": 8}}) is None
    assert line_rule({**bert, "added_tokens": [{"content": "ab", "special": False}]}) is None
    assert line_rule({"pre_tokenizer": {"type": "ByteLevel"}}) is None
    assert line_rule({"pre_tokenizer": None}) is None


def test_a_document_whose_starts_are_out_of_order_is_not_used():
    asked = []
    parts = LineParts(("whitespace", ""), None, lambda texts: [[9]] * len(texts))
    parts.joined = lambda texts: asked.extend(texts) or [[9]] * len(texts)
    parts.remember(["a b\nc\n", "d e\n"], [[1, 2, 3], [4, 5]], [None, [0, 2]])
    assert parts.encode(["a b", "c", "d e"]) == [[9], [9], [4, 5]]
    assert asked == ["a b", "c"]


WORDS = ["the", "The", "", "▁", "a▁b", "▁x", " y", "  z", "東京", "café", "\x01", "<s>", "</s>",
         "[CLS]", "[UNK]", "ab" * 80, "don't", "U.S.A.", "🍕", "\u200bzero", "e\u0301"]


@pytest.mark.parametrize("kind", ["llama-bpe", "bert-wordpiece", "unigram"])
def test_texts_joined_in_one_call_get_their_ids_alone(kind):
    engine = read_engine_files(KINDS[kind]())
    texts = WORDS + sorted(set(VARIED.split())) + _line_texts(TRICKY)
    assert engine._parts.joined(texts) == engine.encode_ordinary_batch(texts)
    assert engine._parts.joined(texts[::-1]) == engine.encode_ordinary_batch(texts[::-1])


def test_joined_texts_are_asked_one_by_one_when_the_library_refuses_or_misorders():
    class Encoding:
        ids, offsets = [1, 2], [(3, 4), (0, 1)]

    class Library:
        def encode(self, text, add_special_tokens):
            if "bad" in text:
                raise ValueError("cannot")
            return Encoding()

    one_by_one = lambda texts: [[len(text)] for text in texts]  # noqa: E731
    parts = LineParts(("mark", "▁"), Library(), one_by_one)
    assert parts.joined(["a", "bad"]) == [[1], [3]]
    assert parts.joined(["a", "b"]) == [[1], [1]]  # offsets out of order


@pytest.mark.parametrize("kind", ["llama-bpe", "bert-wordpiece", "unigram"])
def test_words_from_their_documents_equal_the_library(kind):
    """A word (or a line's first or last word) that stands between spaces in a document has
    its ids from there; one that does not (at a line's end) is encoded."""
    engine = read_engine_files(KINDS[kind]())
    docs = docs_of(VARIED) + TRICKY
    engine.span_columns(docs)
    words = sorted(set(" ".join(docs).split())) + WORDS + [" the", "▁the", " ", "▁", " ▁x"]
    asked = []
    library = engine._parts.joined
    engine._parts.joined = lambda texts: asked.extend(texts) or library(texts)
    assert engine.encode_parts(words) == engine.encode_ordinary_batch(words)
    assert "quick" not in asked and "brown" not in asked and 0 < len(asked) < len(words) / 2


@pytest.mark.parametrize("kind", ["llama-bpe", "bert-wordpiece", "unigram"])
def test_totals_equal_the_plain_path_without_any_fast_path(kind):
    """``documents_totals`` with the engine's ``span_columns`` and ``encode_parts`` equals it
    without either (every line and word asked of ``encode_ordinary_batch``), over two batches
    sharing one memo."""
    from tokenizers_app.engines.evaluation import documents, documents_totals

    engine = read_engine_files(KINDS[kind]())

    class Plain:
        def __getattr__(self, name):
            if name in ("span_columns", "encode_parts", "words_covered", "round_trips"):
                raise AttributeError(name)
            return getattr(engine, name)

    text = VARIED + "\n\n" + "".join(TRICKY) + "\n\n" + VARIED.upper()
    docs = ["".join(doc) for doc in documents(text.splitlines(keepends=True))]
    fast_memo, plain_memo = {}, {}
    for batch in (docs[: len(docs) // 2], docs[len(docs) // 2:]):
        fast = documents_totals(engine, batch, fast_memo)
        plain = documents_totals(Plain(), batch, plain_memo)
        assert fast.comparable() == plain.comparable()
        assert fast.counts["own_words"] > 10 and fast.counts["lines"] > 5


@pytest.mark.parametrize("kind", ["llama-bpe", "bert-wordpiece", "unigram"])
def test_an_engine_dropped_is_freed_at_once_without_the_collector(kind):
    """No reference cycle: a sandbox child that forgets a version frees its library memory
    at once (with a cycle, forgotten versions piled up until the collector ran)."""
    import gc
    import weakref

    engine = read_engine_files(KINDS[kind]())
    gc.disable()
    try:
        gone = weakref.ref(engine)
        del engine
        assert gone() is None
    finally:
        gc.enable()


@pytest.mark.parametrize("kind", ["llama-bpe", "bert-wordpiece", "unigram"])
def test_a_few_texts_are_encoded_in_one_call_without_the_documents_places(kind):
    """Texts of fewer characters than a tenth of the documents': encoded by ``joined``, the
    documents' places never found; the ids are still the library's."""
    engine = read_engine_files(KINDS[kind]())
    docs = docs_of(VARIED) * 3 + TRICKY
    engine.span_columns(docs)
    few = ["quick", "東京", " the", "▁x", "a b", "", "quick"]
    assert engine.encode_parts(few) == engine.encode_ordinary_batch(few)
    assert engine._parts.places is None
    many = _line_texts(docs)
    assert engine.encode_parts(many) == engine.encode_ordinary_batch(many)
    assert engine._parts.places is not None
