"""The Hugging Face engine's fast paths of evaluation give exactly the plain path's answers:
byte pieces' spans taken as they come when spreading them would change nothing (and spread
when it would), and each word's and line's ids derived from the documents' encoding where the
pipeline makes them the same (and asked of the library where it does not)."""

from __future__ import annotations

from tests.engines.test_engines import KINDS
from tests.engines.test_eval_fast import VARIED, docs_of
from tokenizers_app.engines import read_engine_files
from tokenizers_app.engines.hf import _one_byte_each
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
