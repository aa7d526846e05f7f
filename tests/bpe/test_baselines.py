"""Baseline tokenizers: characters, bytes and whitespace-separated words."""

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import pre_tokenizers

from tokenizers_app.bpe.baselines import (
    ByteTokenizer,
    CharTokenizer,
    WordTokenizer,
    whitespace_words,
)

MIXED = "Hé  llo\twörld 東京 🍕👍🏽\n"


def test_byte_tokens_are_the_utf8_bytes():
    tokenizer = ByteTokenizer()
    assert tokenizer.encode_ordinary("aé") == [97, 195, 169]
    assert tokenizer.token_bytes(195) == b"\xc3"
    assert tokenizer.token_spans("aé") == [(97, 0, 1), (195, 1, 2), (169, 2, 3)]
    assert (tokenizer.algorithm, tokenizer.vocab_size, tokenizer.special_ids) == ("byte", 256, {})
    with pytest.raises(ValueError, match="256"):
        tokenizer.token_bytes(256)


def test_char_tokens_are_code_points_over_all_of_unicode():
    tokenizer = CharTokenizer()
    assert tokenizer.encode_ordinary("aé🍕") == [97, 233, 0x1F355]
    assert tokenizer.token_bytes(0x1F355) == "🍕".encode()
    assert tokenizer.token_spans("aé🍕") == [(97, 0, 1), (233, 1, 3), (0x1F355, 3, 7)]
    assert (tokenizer.algorithm, tokenizer.vocab_size) == ("char", 0x110000)
    assert tokenizer.unknown_count(MIXED) == 0
    with pytest.raises(ValueError, match="1114112"):
        tokenizer.token_bytes(0x110000)


@given(st.text())
def test_byte_and_char_baselines_round_trip_any_text(text):
    for tokenizer in (ByteTokenizer(), CharTokenizer()):
        assert tokenizer.decode(tokenizer.encode_ordinary(text)) == text
        spans = tokenizer.token_spans(text)
        assert b"".join(tokenizer.token_bytes(i) for i, _, _ in spans) == text.encode(
            "utf-8", errors="surrogatepass")


def test_word_vocabulary_is_the_most_frequent_words_ties_by_utf8_bytes():
    lines = iter(["b a é", "c b", "a d", "é é"])  # a stream: read once
    tokenizer = WordTokenizer.from_corpus(lines, max_size=3)
    # counts: é 3, a 2, b 2, c 1, d 1 -> é, then a before b
    assert tokenizer.words == ["<unk>", "é", "a", "b"]
    assert tokenizer.vocab_size == 4 and tokenizer.special_ids == {"<unk>": 0}


def test_unseen_words_encode_to_unk_and_count_as_unknown_characters():
    tokenizer = WordTokenizer(["the", "cat"])
    assert tokenizer.encode_ordinary("the  dog\tcat\n") == [1, 0, 2]
    assert tokenizer.unknown_count("the  dog\tcat\n") == 3
    assert tokenizer.decode([1, 0, 2]) == "the <unk> cat"
    assert tokenizer.token_spans("é cat") == [(0, 0, 2), (2, 3, 6)]
    assert tokenizer.split_words("the  dog") == ["the", "dog"]


def test_the_unknown_token_in_a_corpus_is_not_a_word():
    assert WordTokenizer.from_corpus(["<unk> <unk> a"], 5).words == ["<unk>", "a"]


@pytest.mark.parametrize("words, message", [
    (["a", "a"], "'a'"), (["a b"], "'a b'"), ([""], "''"), (["<unk>"], "'<unk>'")])
def test_word_vocabulary_rejects_bad_words(words, message):
    with pytest.raises(ValueError, match=message):
        WordTokenizer(words)


@pytest.mark.parametrize("lines, max_size, message", [
    (["a"], 0, "max_size"), (["a"], True, "max_size"), ([" ", ""], 5, "empty")])
def test_word_vocabulary_rejects_bad_corpora(lines, max_size, message):
    with pytest.raises(ValueError, match=message):
        WordTokenizer.from_corpus(lines, max_size)


def test_whitespace_words_split_on_unicode_white_space_as_hugging_face_does():
    text = "a\u3000b\u00a0c\x1cd\u2028e\u200bf\r\ng\x85h  \t"
    hf_words = [word for word, _ in pre_tokenizers.WhitespaceSplit().pre_tokenize_str(text)]
    assert whitespace_words(text) == hf_words == ["a", "b", "c\x1cd", "e\u200bf", "g", "h"]
