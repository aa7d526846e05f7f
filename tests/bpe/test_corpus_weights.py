"""Corpus weights in the core: a corpus of weight 2 counts (and trains) exactly as the corpus
given twice; weight 1 everywhere is today's result; a bad weight is refused in words."""

from pathlib import Path

import pytest

from tokenizers_app.bpe import train_bpe, train_char_bpe
from tokenizers_app.bpe.canonical import content_digest
from tokenizers_app.bpe.char_bpe import count_words, split_regex
from tokenizers_app.bpe.counting import MAX_CORPUS_WEIGHT, check_weights
from tokenizers_app.bpe.pretokenize import PreTokenizer
from tokenizers_app.bpe.training import Ticker, count_pretokens

DE = "Der schnelle braune Fuchs springt über den faulen Hund. Der Hund schläft.\n" * 7
EN = "The quick brown fox jumps over the lazy dog. The dog sleeps, the fox runs.\n" * 11


@pytest.fixture
def files(tmp_path):
    de, en = tmp_path / "de.txt", tmp_path / "en.txt"
    de.write_text(DE, encoding="utf-8")
    en.write_text(EN, encoding="utf-8")
    return de, en


def _exact(result):
    """Everything a trained result holds, and the digest of its stored form."""
    return (result.vocab, result.merges, result.merge_counts, result.special_tokens,
            content_digest(result.tokenizer()))


def _pretokens(source, weights=None, workers=1):
    return count_pretokens(source, PreTokenizer("gpt2"), [], Ticker(None, None), workers,
                           weights)


def test_weight_two_counts_as_the_corpus_given_twice(files):
    de, en = files
    assert _pretokens([de, en], [2, 1]) == _pretokens([de, de, en])
    assert _pretokens([de, en], [1, 3]) == _pretokens([de, en, en, en])
    words = lambda source, weights=None: count_words(  # noqa: E731
        source, split_regex("whitespace"), True, ["<unk>"], Ticker(None, None), 1, weights)
    assert words([de, en], [2, 1]) == words([de, de, en])
    weighted = _pretokens([de, en], [2, 1])
    plain = _pretokens([de, en])
    assert weighted[" schnelle".encode()] == 2 * plain[" schnelle".encode()]
    assert weighted[b" quick"] == plain[b" quick"]


def test_weight_two_trains_as_the_corpus_given_twice_both_kinds(files):
    de, en = files
    assert _exact(train_bpe([de, en], 300, weights=[2, 1], workers=1)) == \
        _exact(train_bpe([de, de, en], 300, workers=1))
    assert _exact(train_char_bpe([de, en], 60, weights=[2, 1])) == \
        _exact(train_char_bpe([de, de, en], 60))
    # and the weight changes the result: German merges come earlier
    assert train_bpe([de, en], 300, weights=[2, 1], workers=1).merges != \
        train_bpe([de, en], 300, weights=[1, 2], workers=1).merges


def test_weight_one_everywhere_is_todays_result_byte_for_byte(files):
    de, en = files
    assert _exact(train_bpe([de, en], 300, weights=[1, 1], workers=1)) == \
        _exact(train_bpe([de, en], 300, workers=1))
    assert _exact(train_char_bpe([de, en], 60, weights=[1, 1])) == \
        _exact(train_char_bpe([de, en], 60))


@pytest.mark.parametrize("weights, words", [
    ([0, 1], "whole number from 1 to"), ([1.5, 1], "not 1.5"), ([True, 1], "not True"),
    ([MAX_CORPUS_WEIGHT + 1, 1], f"from 1 to {MAX_CORPUS_WEIGHT}"),
    (["2", 1], "not '2'"), ([1], "1 corpus weights for more documents"),
    ([1, 1, 1], "3 corpus weights for 2 documents"),
])
def test_bad_weights_are_refused_in_words(files, weights, words):
    with pytest.raises(ValueError, match=words):
        train_bpe(list(files), 300, weights=weights, workers=1)
    with pytest.raises(ValueError, match=words):
        train_char_bpe(list(files), 60, weights=weights)


def test_check_weights_keeps_none_and_good_weights():
    assert check_weights(None) is None
    assert check_weights((1, MAX_CORPUS_WEIGHT), 2) == [1, MAX_CORPUS_WEIGHT]


def test_weight_applies_to_a_large_file_counted_in_parallel(tmp_path, monkeypatch):
    from tokenizers_app.bpe import counting
    monkeypatch.setattr(counting, "RANGE_BYTES", 4096)
    monkeypatch.setattr(counting, "MIN_RANGE_BYTES", 1024)
    big = tmp_path / "big.txt"
    big.write_text(EN * 40, encoding="utf-8")
    small = tmp_path / "small.txt"
    small.write_text(DE, encoding="utf-8")
    monkeypatch.setattr("tokenizers_app.bpe.training.is_large_file",
                        lambda path: path is not None and path.name == "big.txt")
    assert _pretokens([big, small], [3, 1], workers=2) == _pretokens([big, big, big, small])


def test_more_weight_on_a_language_lowers_its_premium(tmp_path):
    """The README's advice: the premium (tokens on a language / tokens on the pivot, over the
    same lines) of German falls when German weighs more in training."""
    en_lines = [f"The {w} house number {n} stands by the old river road." for n, w in
                enumerate(["red", "green", "small", "tall", "quiet", "busy"] * 8)]
    de_lines = [f"Das {w} Haus Nummer {n} steht an der alten Flussstraße." for n, w in
                enumerate(["rote", "grüne", "kleine", "hohe", "stille", "belebte"] * 8)]
    en, de = tmp_path / "en.txt", tmp_path / "de.txt"
    en.write_text("\n".join(en_lines * 3) + "\n", encoding="utf-8")
    de.write_text("\n".join(de_lines) + "\n", encoding="utf-8")

    def premium(weights):
        tokenizer = train_bpe([en, de], 300, weights=weights, workers=1).tokenizer()
        tokens = lambda lines: sum(len(tokenizer.encode(line)) for line in lines)  # noqa: E731
        return tokens(de_lines) / tokens(en_lines)

    assert premium([1, 4]) < premium([1, 1])
