"""Metric definitions: each on hand-computed examples."""

import math

import pytest

from tokenizers_app.bpe.metrics import (
    chars_per_token,
    compression_ratio,
    count_cut_characters,
    count_split_words,
    encode_throughput_mb_s,
    renyi_efficiency,
    share,
    split_flags,
    tokens_per_word,
    vocabulary_utilization,
    word_spans,
)


def renyi(probabilities, vocab_size):
    """Rényi entropy of order 2.5 by its definition, over the log of the vocab size."""
    return math.log(sum(p ** 2.5 for p in probabilities)) / (1 - 2.5) / math.log(vocab_size)


def test_ratio_helpers_on_worked_examples():
    assert compression_ratio(num_bytes=10, num_tokens=4) == 2.5
    assert chars_per_token(num_chars=6, num_tokens=4) == 1.5
    assert tokens_per_word(num_tokens=5, num_words=2) == 2.5
    assert vocabulary_utilization(64, 256) == 0.25
    assert encode_throughput_mb_s(3_000_000, 1.5) == 2.0
    assert share(1, 4) == 0.25


def test_ratios_over_nothing_are_zero():
    assert compression_ratio(0, 0) == 0.0 and tokens_per_word(3, 0) == 0.0
    assert encode_throughput_mb_s(0, 0.0) == 0.0


def test_word_spans_are_utf8_byte_spans_of_whitespace_words():
    assert word_spans("ab  é") == [(0, 2), (4, 6)]
    assert word_spans("  東京\tx\n") == [(2, 8), (9, 10)]
    assert word_spans(" \n") == []


def test_a_word_is_split_when_two_tokens_touch_its_bytes():
    words = [(0, 5), (6, 11)]  # "hello world"
    assert count_split_words(words, [(0, 3), (3, 5), (5, 11)]) == 1  # " world" is one token
    assert count_split_words(words, [(0, 5), (5, 6), (6, 11)]) == 0  # a lone space token
    assert count_split_words(words, [(0, 11)]) == 0  # one token over both words
    assert count_split_words(words, [(0, 8), (8, 11)]) == 1  # only "world" is cut
    assert count_split_words(words, [(0, 1), (1, 2), (6, 11)]) == 1  # "llo" has no token
    assert count_split_words([], [(0, 3)]) == 0


def test_split_flags_tell_each_word_apart():
    assert split_flags([(0, 5), (6, 11)], [(0, 3), (3, 5), (5, 11)]) == [True, False]
    assert split_flags([(0, 2), (3, 4)], [(0, 4)]) == [False, False]


def test_cut_characters_are_multibyte_characters_a_boundary_falls_inside():
    assert count_cut_characters("aé€", {0, 1, 3, 5, 6}) == (2, 1)
    assert count_cut_characters("aé€", {0, 1, 3, 6}) == (2, 0)
    assert count_cut_characters("🍕", {0, 1, 2, 3, 4}) == (1, 1)
    assert count_cut_characters("abc", {1, 2}) == (0, 0)


def test_renyi_efficiency_on_worked_examples():
    assert renyi_efficiency([1, 1], vocab_size=4) == pytest.approx(0.5)
    assert renyi_efficiency([3, 3, 3, 3], vocab_size=4) == pytest.approx(1.0)
    assert renyi_efficiency([2, 1, 1], vocab_size=10) == pytest.approx(
        renyi([0.5, 0.25, 0.25], 10))
    assert renyi_efficiency([5], vocab_size=10) == 0.0
    assert renyi_efficiency([], vocab_size=10) == 0.0


def test_renyi_efficiency_does_not_depend_on_the_order_of_the_counts():
    counts = [1, 10**6, 3, 7, 10**6 + 1, 2] * 50
    assert renyi_efficiency(counts, 500) == renyi_efficiency(sorted(counts), 500)


def test_every_metric_has_a_label_and_a_unit():
    from tokenizers_app.bpe.baselines import ByteTokenizer, CharTokenizer
    from tokenizers_app.bpe.evaluation import evaluate
    from tokenizers_app.bpe.metrics import METRICS

    names = set(evaluate(ByteTokenizer(), ["a b"])) | set(evaluate(CharTokenizer(), ["a b"]))
    counts = {"bytes", "chars", "tokens", "words", "lines"}
    assert names - counts == set(METRICS)


def test_the_best_value_follows_each_metrics_direction():
    from tokenizers_app.bpe.metrics import HEADLINE_METRICS, METRICS, best_value

    assert best_value("compression_ratio", [3.1, None, 3.4]) == 3.4  # higher is better
    assert best_value("tokens_per_word", [1.4, None, 1.2]) == 1.2  # lower is better
    assert best_value("compression_ratio", [3.1, None]) is None  # nothing to choose between
    assert set(HEADLINE_METRICS) <= set(METRICS)


def test_no_timing_figure_is_ever_best():
    from tokenizers_app.bpe.metrics import TIMING_METRICS, best_value

    assert "encode_throughput_mb_s" in TIMING_METRICS
    # two measurements of one version differ by timing noise: neither is a better score
    assert best_value("encode_throughput_mb_s", [1.145, 0.790]) is None
