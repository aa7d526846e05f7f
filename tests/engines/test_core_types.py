"""Our core's two kinds against the engine protocol's types (``engines/protocol.py``): a vocab of
``{int: bytes}``, merges of ``(bytes, bytes)``, ``decode`` giving text, ids that are ints; the
same after a round trip through the rows a version keeps (``merge_rows``, ``vocab_rows``,
``from_rows``), which are the tokenizer's own vocab and merges."""

import pytest

from tests.bpe.corpora import SAMPLES
from tokenizers_app.bpe import train_bpe, train_char_bpe
from tokenizers_app.engines import Engine
from tokenizers_app.engines.registry import kind_of

TEXT = SAMPLES["english"][:2000] + " naïve café 日本語 " + SAMPLES["chinese"][:40]
TRAINED = {
    "byte_bpe": lambda: train_bpe([TEXT], 400, ["<|endoftext|>"]).tokenizer(),
    "char_bpe": lambda: train_char_bpe([TEXT], 200, ["<unk>", "<s>"],
                                       split="word_punct").tokenizer(),
}


def check_types(tokenizer) -> None:
    assert isinstance(tokenizer, Engine)
    assert all(isinstance(i, int) and type(token) is bytes
               for i, token in tokenizer.vocab.items())
    assert all(type(left) is bytes and type(right) is bytes for left, right in tokenizer.merges)
    assert all(tokenizer.vocab[tokenizer.special_ids[t]] == t.encode()
               for t in tokenizer.special_tokens)
    ids = tokenizer.encode(TEXT + "<s>", allowed_special="all")
    assert ids and all(type(i) is int for i in ids)
    assert type(tokenizer.decode(ids)) is str
    assert all(type(tokenizer.token_bytes(i)) is bytes for i in ids)
    assert all(tokenizer.token_bytes(i) == tokenizer.vocab[i] for i in ids)
    spans = tokenizer.token_spans(TEXT)
    assert all(type(i) is int and type(start) is int and type(end) is int
               for i, start, end in spans)


@pytest.mark.parametrize("kind", TRAINED)
def test_a_core_tokenizer_has_the_protocols_types(kind):
    tokenizer = TRAINED[kind]()
    assert tokenizer.algorithm == kind
    check_types(tokenizer)


@pytest.mark.parametrize("kind", TRAINED)
def test_its_rows_are_its_vocab_and_merges_and_give_it_back(kind):
    tokenizer = TRAINED[kind]()
    found = kind_of(tokenizer)
    assert found.merge_rows(tokenizer) == tokenizer.merges
    assert {i: token for i, token, _kind in found.vocab_rows(tokenizer)} == tokenizer.vocab
    back = found.from_rows(tokenizer.vocab, tokenizer.merges, tokenizer.merge_counts,
                           tokenizer.special_ids, tokenizer.pattern, tokenizer.options)
    check_types(back)
    assert (back.vocab, back.merges, found.digest(back)) == \
        (tokenizer.vocab, tokenizer.merges, found.digest(tokenizer))
    assert back.encode_ordinary(TEXT) == tokenizer.encode_ordinary(TEXT)


def test_a_char_level_tokenizer_keeps_its_symbols_utf8_with_the_suffix():
    tokenizer = TRAINED["char_bpe"]()
    assert {i: text.encode() for i, text in tokenizer.symbols.items()} == tokenizer.vocab
    assert any(token.endswith(b"</w>") for token in tokenizer.vocab.values())
    assert "日".encode() in tokenizer.vocab.values() or "日</w>".encode() in \
        tokenizer.vocab.values()
    assert [(a.encode(), b.encode()) for a, b in tokenizer.symbol_merges] == tokenizer.merges
