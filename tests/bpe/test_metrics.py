"""Metrics: each helper on hand-computed examples, then ``evaluate`` on every kind of
tokenizer, and the fast ``evaluate`` against the plain line-by-line computation it replaces."""

import json
import math
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.bpe.corpora import SAMPLES, varied_text
from tests.fixtures import gpt2_fixture_dir
from tokenizers_app.bpe import load_tokenizer
from tokenizers_app.bpe.baselines import ByteTokenizer, CharTokenizer, WordTokenizer
from tokenizers_app.bpe.char_bpe import CharBPETokenizer, train_char_bpe
from tokenizers_app.bpe.metrics import (
    BYTE_LEVEL,
    chars_per_token,
    compression_ratio,
    count_cut_characters,
    count_split_words,
    encode_throughput_mb_s,
    evaluate,
    metrics_of,
    renyi_efficiency,
    share,
    split_flags,
    tokens_per_word,
    vocabulary_utilization,
    word_spans,
)
from tokenizers_app.bpe.tokenizer import Tokenizer
from tokenizers_app.bpe.training import train_bpe

TEXT = ("The quick brown fox jumps over the lazy dog.\n"
        "Le cœur déçu mais l'âme plutôt naïve, Louÿs rêva de crapaüter.\n"
        "東京は日本の首都です。 私は 東京 に 住んで います。\n"
        "I ❤️ 🍕 and 👍🏽 a lot   \t  of   whitespace\n\n")
LINES = TEXT.splitlines(keepends=True)


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


def test_evaluate_the_byte_baseline_by_hand():
    result = evaluate(ByteTokenizer(), ["hi é"])  # 5 bytes: h i ␠ c3 a9; 4 characters
    assert result == {**result, "compression_ratio": 1.0, "chars_per_token": 0.8,
                      "tokens_per_word": 2.5, "word_split_rate": 1.0, "word_coverage": 0.0,
                      "word_coverage_distinct": 0.0, "vocabulary_utilization": 5 / 256,
                      "byte_fallback_rate": 1.0, "lossless_rate": 1.0,
                      "bytes": 5, "chars": 4, "tokens": 5, "words": 2, "lines": 1}
    assert result["renyi_efficiency"] == pytest.approx(math.log(5) / math.log(256))
    assert "unknown_rate" not in result


def test_evaluate_the_char_baseline_by_hand():
    result = evaluate(CharTokenizer(), ["aa b", "b"])  # ids a a ␠ b | b
    assert result == {**result, "chars_per_token": 1.0, "tokens_per_word": 5 / 3,
                      "word_split_rate": 1 / 3, "word_coverage": 2 / 3,
                      "word_coverage_distinct": 0.5, "vocabulary_utilization": 3 / 0x110000,
                      "unknown_rate": 0.0, "lossless_rate": 1.0}
    assert result["renyi_efficiency"] == pytest.approx(renyi([0.4, 0.2, 0.4], 0x110000))


def test_evaluate_the_word_baseline_by_hand():
    tokenizer = WordTokenizer.from_corpus(["a a b", "c"], max_size=2)  # <unk>, a, b
    result = evaluate(tokenizer, ["a c", "a  b"])  # a <unk> | a b
    assert result == {**result, "compression_ratio": 7 / 4, "tokens_per_word": 1.0,
                      "word_split_rate": 0.0, "word_coverage": 3 / 4,
                      "word_coverage_distinct": 2 / 3, "vocabulary_utilization": 1.0,
                      "unknown_rate": 1 / 7, "lossless_rate": 0.0}
    assert result["renyi_efficiency"] == pytest.approx(renyi([2 / 3, 1 / 3], 2))


def test_evaluate_character_level_bpe_by_hand():
    vocab = {0: "<unk>", 1: "l", 2: "o", 3: "w</w>", 4: "lo", 5: "low</w>"}
    tokenizer = CharBPETokenizer(vocab, [("l", "o"), ("lo", "w</w>")], ["<unk>"])
    result = evaluate(tokenizer, ["low lo", "lowx"])  # low</w> | l <unk> | lo <unk> <unk>
    assert result == {**result, "compression_ratio": 10 / 6, "tokens_per_word": 2.0,
                      "word_split_rate": 2 / 3, "word_coverage": 1 / 3,
                      "word_coverage_distinct": 1 / 3, "vocabulary_utilization": 3 / 5,
                      "unknown_rate": 3 / 10, "lossless_rate": 0.0,
                      "bytes": 10, "chars": 10, "tokens": 6, "words": 3, "lines": 2}
    assert result["renyi_efficiency"] == pytest.approx(math.log(3) / math.log(5))


def test_evaluate_byte_level_bpe_by_hand_counting_a_leading_space_with_its_word():
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"hi", 257: b" hi", 258: b"<s>"}
    tokenizer = Tokenizer(vocab, [(b"h", b"i"), (b" ", b"hi")], ["<s>"], pattern="gpt2")
    result = evaluate(tokenizer, ["hi hi é"])  # hi | " hi" | " " c3 a9
    assert result == {**result, "compression_ratio": 8 / 5, "chars_per_token": 7 / 5,
                      "word_split_rate": 1 / 3, "word_coverage": 2 / 3,
                      "word_coverage_distinct": 2 / 3, "vocabulary_utilization": 5 / 258,
                      "byte_fallback_rate": 1.0, "lossless_rate": 1.0}
    assert result["renyi_efficiency"] == pytest.approx(math.log(5) / math.log(258))


def test_evaluate_reads_lines_from_a_stream_once():
    from_stream = evaluate(ByteTokenizer(), iter(LINES))
    from_list = evaluate(ByteTokenizer(), LINES)
    assert from_stream.pop("encode_throughput_mb_s") > 0
    from_list.pop("encode_throughput_mb_s")
    assert from_stream == from_list and from_stream["lines"] == 5


def trained_tokenizers():
    yield train_bpe([TEXT], vocab_size=300).tokenizer()
    yield train_char_bpe([TEXT], vocab_size=120).tokenizer()
    yield ByteTokenizer()
    yield CharTokenizer()
    yield WordTokenizer.from_corpus(LINES, max_size=20)


@pytest.mark.parametrize("tokenizer", list(trained_tokenizers()), ids=lambda t: t.algorithm)
def test_evaluate_any_tokenizer_gives_consistent_json_metrics(tokenizer):
    result = json.loads(json.dumps(evaluate(tokenizer, LINES)))
    tokens = sum(len(tokenizer.encode_ordinary(line)) for line in LINES)
    words = sum(len(line.split()) for line in LINES)
    assert (result["bytes"], result["chars"], result["tokens"], result["words"],
            result["lines"]) == (len(TEXT.encode()), len(TEXT), tokens, words, len(LINES))
    assert result["compression_ratio"] == len(TEXT.encode()) / tokens
    assert result["tokens_per_word"] == tokens / words
    rate = "byte_fallback_rate" if tokenizer.algorithm in ("byte_bpe", "byte") else "unknown_rate"
    assert len(result) == 16 and rate in result
    for key in ("word_split_rate", "word_coverage", "word_coverage_distinct", rate,
                "vocabulary_utilization", "lossless_rate", "renyi_efficiency"):
        assert 0.0 <= result[key] <= 1.0, key
    assert result["encode_throughput_mb_s"] > 0


def test_byte_level_bpe_is_lossless_and_its_fallback_rate_matches_a_direct_count():
    tokenizer = train_bpe([TEXT], vocab_size=300).tokenizer()
    result = evaluate(tokenizer, LINES)
    assert result["lossless_rate"] == 1.0
    multibyte = spelled_whole = 0
    for line in LINES:
        spans = [(start, end) for _, start, end in tokenizer.token_spans(line, ())]
        offset = 0
        for char in line:
            size = len(char.encode())
            if size > 1:
                multibyte += 1
                spelled_whole += any(s <= offset and offset + size <= e for s, e in spans)
            offset += size
    assert multibyte > 0 and 0 < spelled_whole < multibyte  # the test text holds both kinds
    assert result["byte_fallback_rate"] == (multibyte - spelled_whole) / multibyte


def test_character_level_bpe_loses_whitespace_and_reports_unknown_characters():
    tokenizer = train_char_bpe([TEXT], vocab_size=120).tokenizer()
    result = evaluate(tokenizer, ["the lazy", "a  lot\n", "ſ ȹ"])  # "ſ", "ȹ" never seen
    assert result["lossless_rate"] == 1 / 3
    assert result["unknown_rate"] == 2 / 18


# -- the fast evaluate against the plain line-by-line computation -------------------------------

def reference_evaluate(tokenizer, lines) -> dict:
    """The plain computation, line by line, with every token's span: the oracle for the fast
    ``evaluate``, which counts each distinct pre-token or run once."""
    special_ids = set(tokenizer.special_ids.values())
    totals, id_counts, covered = Counter(), Counter(), {}
    for line in lines:
        ids = tokenizer.encode_ordinary(line)
        words = word_spans(line)
        spans = [(start, end) for _id, start, end in tokenizer.token_spans(line, ())]
        totals.update(bytes=len(line.encode()), chars=len(line), tokens=len(ids),
                      words=len(words), lines=1, split_words=count_split_words(words, spans),
                      lossless_lines=tokenizer.decode(ids) == line)
        id_counts.update(ids)
        if tokenizer.algorithm == "byte_bpe":
            own_words = [w for w in tokenizer.pretokenizer.split(line) if not w.isspace()]
        else:
            own_words = tokenizer.split_words(line)
        for word in own_words:
            if word not in covered:
                word_ids = tokenizer.encode_ordinary(word)
                covered[word] = len(word_ids) == 1 and word_ids[0] not in special_ids
            totals.update(own_words=1, covered_words=covered[word])
        if tokenizer.algorithm in BYTE_LEVEL:
            multibyte, cut = count_cut_characters(line, {b for span in spans for b in span})
            totals.update(multibyte_chars=multibyte, cut_chars=cut)
        else:
            totals.update(unknown_chars=tokenizer.unknown_count(line))
    totals.update(distinct_own_words=len(covered), distinct_covered_words=sum(covered.values()))
    return metrics_of(tokenizer, totals, id_counts, seconds=1.0)


EDGE_LINES = ["xyy xyyy yy axyy\n", "no newline at the end", "a  b", "x<|endoftext|>y\n",
              "\x1c a\x1cb \x85c\u3000d\u3000 é\n", "", "\r\n", "don't stop.\n", "end.",
              "(quoted) 'words', don't!\n", "  indented\n", "\n", "🍕🍕x🍕 é€\n"]
VARIED = varied_text(150_000, seed=7).replace("a" * 100_000, "a" * 500)
VARIED_LINES = VARIED.splitlines(keepends=True) + EDGE_LINES
TRAINING = VARIED[:100_000] + "".join(SAMPLES.values()) + " xyy xyyy" * 20
IRREGULAR = r"x|(?<=x)y+|\w|\s+|[^\w\s]+"  # "yy" after "x" is one pre-token, alone it is two


def same_metrics(tokenizer, lines):
    fast, plain = evaluate(tokenizer, lines), reference_evaluate(tokenizer, lines)
    assert fast.pop("encode_throughput_mb_s") > 0 or not plain["bytes"]
    plain.pop("encode_throughput_mb_s")
    assert fast == plain


@pytest.mark.parametrize("pattern", ["gpt2", "gpt4", "none", IRREGULAR])
def test_fast_evaluate_equals_the_reference_for_byte_level_bpe(pattern):
    tokenizer = train_bpe([TRAINING], 700, special_tokens=["<|endoftext|>"],
                          pattern=pattern).tokenizer()
    same_metrics(tokenizer, VARIED_LINES)


def test_fast_evaluate_equals_the_reference_for_gpt2():
    same_metrics(load_tokenizer(gpt2_fixture_dir()), VARIED_LINES)


@pytest.mark.parametrize("split, lowercase", [("whitespace", False), ("word_punct", True)])
def test_fast_evaluate_equals_the_reference_for_character_level_bpe(split, lowercase):
    result = train_char_bpe([TRAINING], 600, split=split, lowercase=lowercase)
    same_metrics(result.tokenizer(), VARIED_LINES)


@pytest.mark.parametrize("tokenizer", [ByteTokenizer(), CharTokenizer(),
                                       WordTokenizer.from_corpus(VARIED_LINES, 2000)],
                         ids=lambda t: t.algorithm)
def test_fast_evaluate_equals_the_reference_for_the_baselines(tokenizer):
    same_metrics(tokenizer, VARIED_LINES)


SMALL = {pattern: train_bpe([TRAINING[:20_000]], 320, pattern=pattern).tokenizer()
         for pattern in ("gpt2", "gpt4")}
SMALL_CHAR = train_char_bpe([TRAINING[:20_000]], 150, split="word_punct").tokenizer()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet="ab.'! \t\né€🍕\u3000", max_size=24), max_size=6),
       st.sampled_from(["gpt2", "gpt4", "char"]))
def test_fast_evaluate_equals_the_reference_on_random_lines(lines, kind):
    same_metrics(SMALL_CHAR if kind == "char" else SMALL[kind], lines)
