"""The token table (display texts, their JSON and byte lengths kept per tokenizer) against its
plain version: ``token_text`` and ``len`` of each token, spans added up one token at a time, and
``json.dumps`` of the answer; the answer's compiled writer against its Python one."""

import json

import pytest

from hypothesis import given
from hypothesis import strategies as st

from tests.bpe.corpora import SAMPLES
from tokenizers_app.bpe import Tokenizer, compiled, train_bpe
from tokenizers_app.bpe.display import token_text
from tokenizers_app.bpe.token_table import TokenTable, by_id

SPECIALS = ["<|endoftext|>", "<|pad|>"]
TRAINED = train_bpe(list(SAMPLES.values()), 256 + len(SPECIALS) + 400,
                    special_tokens=SPECIALS).tokenizer()
TEXTS = ["The registry keeps every version.\n\tdef f(x):  return x\r\n",
         "字节对编码 バイト 한국어 🙂🚀 👨‍👩‍👧 naïve façade\u3000\x00",
         f"a{SPECIALS[0]}b {SPECIALS[1]}\n", ""]


def plain_answer(tokenizer, ids: list[int]) -> dict:
    """The encode answer computed token by token, as the API computed it before the table."""
    spans, offset = [], 0
    for token_id in ids:
        size = len(tokenizer.vocab[token_id])
        spans.append((offset, offset + size))
        offset += size
    return {"ids": ids, "tokens": [token_text(tokenizer.vocab[i]) for i in ids], "spans": spans}


def test_the_table_gives_the_plain_text_and_length_of_every_id():
    table = TRAINED.token_table
    for token_id, token in TRAINED.vocab.items():
        assert table.texts[token_id] == token_text(token)
        assert json.loads(table.json_texts[token_id]) == token_text(token)
        assert table.lengths[token_id] == len(token)
    shown = [token_text(token) for token in TRAINED.vocab.values()]
    assert all(text in shown for text in SPECIALS)  # the special tokens are in the table
    assert "<0xFF>" in shown and any(text.count("<0x") >= 2 for text in shown)  # and bytes
    assert any("<0x" in text and len(text) > 6 for text in shown)  # half a character merged


def test_the_table_is_built_once_per_tokenizer():
    assert TRAINED.token_table is TRAINED.token_table
    assert TRAINED.token_table.texts is TRAINED.token_table.texts


def test_the_encode_answer_is_json_dumps_of_the_plain_answer():
    for text in TEXTS:
        ids = TRAINED.encode(text, allowed_special="all")
        answer = TRAINED.token_table.encoding_json(ids)
        assert answer == json.dumps(plain_answer(TRAINED, ids))
        spans = json.loads(answer)["spans"]
        data = text.encode()
        assert b"".join(data[start:end] for start, end in spans) == data
        assert TRAINED.token_table.spans_of(ids) == plain_answer(TRAINED, ids)["spans"]


def test_token_spans_are_the_plain_spans_with_their_ids():
    for text in TEXTS:
        ids = TRAINED.encode(text, allowed_special="all")
        spans = plain_answer(TRAINED, ids)["spans"]
        assert TRAINED.token_spans(text) == [(i, a, b) for i, (a, b) in zip(ids, spans)]


@given(st.dictionaries(st.integers(0, 2**31 - 1), st.binary(max_size=6), max_size=40),
       st.data())
def test_any_vocab_dense_or_sparse_gives_the_plain_answer(vocab, data):
    table = TokenTable(vocab)
    ids = data.draw(st.lists(st.sampled_from(sorted(vocab)), max_size=30)) if vocab else []
    assert table.texts_of(ids) == [token_text(vocab[i]) for i in ids]
    spans, offset = [], 0
    for token_id in ids:
        spans.append((offset, offset + len(vocab[token_id])))
        offset += len(vocab[token_id])
    assert table.spans_of(ids) == spans
    expected = {"ids": ids, "tokens": [token_text(vocab[i]) for i in ids], "spans": spans}
    assert table.encoding_json(ids) == json.dumps(expected)


def test_ids_with_few_gaps_are_a_list_and_sparse_ids_a_dict():
    assert by_id({0: b"ab", 2: b"c"}, len) == [2, None, 1]
    assert by_id({0: b"ab", 2**31 - 1: b"c"}, len) == {0: 2, 2**31 - 1: 1}
    sparse = Tokenizer({i: bytes([i]) for i in range(256)} | {2**31 - 1: b"ab"}, [(b"a", b"b")])
    ids = sparse.encode_ordinary("abc")
    assert ids == [2**31 - 1, 99]
    assert sparse.token_table.encoding_json(ids) == json.dumps(plain_answer(sparse, ids))


# skipped on the pure loops only: where the core is compiled, a writer that was not built fails
needs_compiled = pytest.mark.skipif(not compiled.IS_COMPILED,
                                    reason="the core runs its pure loops: Python writer only")


@needs_compiled
@given(st.lists(st.binary(max_size=6), min_size=1, max_size=40), st.data())
def test_the_compiled_writer_writes_what_the_python_one_joins(tokens, data):
    vocab = dict(enumerate(tokens))  # dense: the tables are lists
    table = TokenTable(vocab)
    ids = data.draw(st.lists(st.sampled_from(sorted(vocab)), max_size=30))
    written = compiled.encoding_json(ids, table.json_texts, table.lengths)
    assert written == table.joined_json(ids) == table.encoding_json(ids)
    assert json.loads(written)["tokens"] == table.texts_of(ids)


@needs_compiled
def test_the_compiled_writer_gives_the_plain_answer_of_real_encodings():
    for text in TEXTS + [TEXTS[1] * 300, "a" * 10_000]:
        ids = TRAINED.encode(text, allowed_special="all")
        written = compiled.encoding_json(ids, TRAINED.token_table.json_texts,
                                         TRAINED.token_table.lengths)
        assert written == json.dumps(plain_answer(TRAINED, ids))


@needs_compiled
@pytest.mark.parametrize("ids", [[-1], [10**6], [2**70], [1, None]])
def test_the_compiled_writer_refuses_an_id_outside_the_table(ids):
    table = TRAINED.token_table
    with pytest.raises((ValueError, TypeError, OverflowError)):
        compiled.encoding_json(ids, table.json_texts, table.lengths)


@needs_compiled
def test_the_compiled_writer_writes_every_number_of_digits():
    ids = [0, 9, 10, 99, 100, 999, 1000, 9999, 10_000, 99_999, 100_000, 999_999, 1_000_000, 7]
    texts, lengths = ['"x"'] * 1_000_001, list(range(1_000_001))  # token k is k bytes long
    offsets = [0]
    for token_id in ids:
        offsets.append(offsets[-1] + token_id)
    expected = {"ids": ids, "tokens": ["x"] * len(ids),
                "spans": [[a, b] for a, b in zip(offsets, offsets[1:])]}
    assert compiled.encoding_json(ids, texts, lengths) == json.dumps(expected)
