"""Evaluation: ``evaluate`` on every kind of tokenizer by hand, then the fast ``evaluate``
against the plain line-by-line computation it replaces (``reference.reference_evaluate``)."""

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.bpe.corpora import SAMPLES, varied_text
from tests.bpe.reference import reference_evaluate
from tests.fixtures import gpt2_fixture_dir
from tokenizers_app.bpe import load_tokenizer
from tokenizers_app.bpe.baselines import ByteTokenizer, CharTokenizer, WordTokenizer
from tokenizers_app.bpe.char_bpe import CharBPETokenizer, train_char_bpe
from tokenizers_app.bpe.evaluation import evaluate
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
    result = evaluate(CharTokenizer(), ["aa b\n", "b"])  # ids a a ␠ b ⏎ b
    assert result == {**result, "chars_per_token": 1.0, "tokens_per_word": 2.0,
                      "word_split_rate": 1 / 3, "word_coverage": 2 / 3,
                      "word_coverage_distinct": 0.5, "vocabulary_utilization": 4 / 0x110000,
                      "unknown_rate": 0.0, "lossless_rate": 1.0, "lines": 2}
    assert result["renyi_efficiency"] == pytest.approx(renyi([2 / 6, 1 / 6, 2 / 6, 1 / 6],
                                                             0x110000))


def test_evaluate_takes_its_blocks_as_one_document():
    # "aa b" + "b" is the text "aa bb": one line, two words, no token across the join
    result = evaluate(CharTokenizer(), ["aa b", "b"])
    assert result == {**result, "tokens_per_word": 2.5, "word_coverage": 0.0, "lines": 1}


def test_evaluate_the_word_baseline_by_hand():
    tokenizer = WordTokenizer.from_corpus(["a a b", "c"], max_size=2)  # <unk>, a, b
    result = evaluate(tokenizer, ["a c\n", "a  b"])  # a <unk> | a b
    assert result == {**result, "compression_ratio": 8 / 4, "tokens_per_word": 1.0,
                      "word_split_rate": 0.0, "word_coverage": 3 / 4,
                      "word_coverage_distinct": 2 / 3, "vocabulary_utilization": 1.0,
                      "unknown_rate": 1 / 8, "lossless_rate": 0.0}
    assert result["renyi_efficiency"] == pytest.approx(renyi([2 / 3, 1 / 3], 2))


def test_evaluate_character_level_bpe_by_hand():
    vocab = {0: "<unk>", 1: "l", 2: "o", 3: "w</w>", 4: "lo", 5: "low</w>"}
    tokenizer = CharBPETokenizer(vocab, [("l", "o"), ("lo", "w</w>")], ["<unk>"])
    result = evaluate(tokenizer, ["low lo\n", "lowx"])  # low</w> | l <unk> | lo <unk> <unk>
    assert result == {**result, "compression_ratio": 11 / 6, "tokens_per_word": 2.0,
                      "word_split_rate": 2 / 3, "word_coverage": 1 / 3,
                      "word_coverage_distinct": 1 / 3, "vocabulary_utilization": 3 / 5,
                      "unknown_rate": 3 / 11, "lossless_rate": 0.0,
                      "bytes": 11, "chars": 11, "tokens": 6, "words": 3, "lines": 2}
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
    tokens = len(tokenizer.encode_ordinary(TEXT))  # the text encoded whole
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
    result = evaluate(tokenizer, ["a  lot\n", "ſ ȹ\n", "the lazy"])  # "ſ", "ȹ" never seen
    # only "the lazy" (each line without its line end): two spaces decode as one, ſ as <unk>
    assert result["lossless_rate"] == 1 / 3
    assert evaluate(tokenizer, ["the lazy\n", "the  lazy\r\n"])["lossless_rate"] == 0.5
    assert result["unknown_rate"] == 2 / 19


# -- the fast evaluate against the plain line-by-line computation (reference.py) -------------

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


def test_the_byte_fallback_rate_of_a_text_without_multibyte_characters_is_undefined():
    tokenizer = train_bpe([TEXT], vocab_size=300).tokenizer()
    ascii_only = evaluate(tokenizer, ["plain ASCII text, nothing more\n"])
    assert "byte_fallback_rate" in ascii_only and ascii_only["byte_fallback_rate"] is None
    assert evaluate(tokenizer, ["café\n"])["byte_fallback_rate"] is not None
