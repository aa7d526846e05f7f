"""Evaluation totals: lines are grouped in order, and a run's facts are counted once (``evaluate``
as a whole is checked against the plain computation in test_metrics.py); character-level BPE
counted by words (``RunTotals.by_words``) against encoding every line and the reference."""

import pytest

from tests.bpe.reference import reference_evaluate
from tokenizers_app.bpe.baselines import ByteTokenizer, WordTokenizer
from tokenizers_app.bpe.char_bpe import train_char_bpe
from tokenizers_app.bpe.evaluation import evaluate
from tokenizers_app.bpe.totals import GROUP_CHARS, RUN_RE, RunTotals


def test_groups_keep_every_line_in_order_and_stay_near_the_group_size():
    lines = [f"line {i}\n" for i in range(30_000)]
    groups = list(RunTotals(ByteTokenizer()).groups(iter(lines)))
    assert [line for group in groups for line in group] == lines
    assert len(groups) > 1
    assert all(sum(map(len, group)) < GROUP_CHARS + 20 for group in groups)


def test_run_facts_of_a_word_and_of_whitespace():
    words = RunTotals(WordTokenizer(["cat"]))
    assert words.run_facts("dog") == {"own_words": 1, "covered_words": 0, "words": 1,
                                      "split_words": False, "unknown_chars": 3}
    assert words.run_facts(" \t") == {"own_words": 0, "covered_words": 0, "unknown_chars": 0}
    byte_level = RunTotals(ByteTokenizer()).run_facts("\u3000\u3000")  # whitespace, 3 bytes each
    assert byte_level == {"own_words": 0, "covered_words": 0, "multibyte_chars": 2,
                          "cut_chars": 2}


# -- character-level BPE by words (RunTotals.by_words: add_runs, word_totals) ------------------

CHAR_TEXT = ("The quick brown fox   jumps over\tthe lazy dog.\n\n  lead and trail  \n"
             "Le cœur déçu, l'âme naïve; 東京は 日本 ☃☃ 🍕\r\nx</w>y a</w> <unk> zzq ÿ\n"
             "don't-stop!! (quoted) 3.14 ... \x1c\x1d sep\u2028line\u00a0nbsp\n" * 3
             + "one two\nlast line without newline")


def char_bpe(split: str, lowercase: bool = False):
    return train_char_bpe([CHAR_TEXT[:300] + "the quick brown fox"], 60, split=split,
                          lowercase=lowercase).tokenizer()


def totals_of(tokenizer, lines, by_words: bool):
    totals = RunTotals(tokenizer)
    totals.by_words = by_words
    for group in totals.groups(lines):
        totals.add(group)
    return totals.eval_totals(lines=len(lines))


@pytest.mark.parametrize("split", ["whitespace", "word_punct"])
def test_counting_by_words_equals_encoding_every_line(split):
    tokenizer = char_bpe(split)
    lines = CHAR_TEXT.splitlines(keepends=True)
    assert RunTotals(tokenizer).by_words
    fast, plain = totals_of(tokenizer, lines, True), totals_of(tokenizer, lines, False)
    assert fast.comparable() == plain.comparable()
    assert fast.counts["unknown_chars"] > 0 and fast.counts["split_words"] > 0
    assert 0 < fast.counts["lossless_lines"] < len(lines) and fast.counts["covered_words"] > 0


def test_counting_by_words_equals_the_reference_for_word_punct():
    tokenizer = char_bpe("word_punct")
    lines = CHAR_TEXT.splitlines(keepends=True)
    fast, plain = evaluate(tokenizer, lines), reference_evaluate(tokenizer, lines)
    assert fast.pop("encode_throughput_mb_s") > 0
    plain.pop("encode_throughput_mb_s")
    assert fast == plain


@pytest.mark.parametrize("line", ["", "\n", "  \n", "a", "a b\n", " a  b \r\n", "é <unk>\n",
                                  "x</w>y\n", "zzq"])
def test_a_line_decoded_from_its_runs_is_its_decode(line):
    tokenizer = char_bpe("whitespace")
    totals = RunTotals(tokenizer)
    runs = RUN_RE.findall(line)
    totals._learn_words(runs)
    for run in runs:
        totals._spell(run)
    assert totals._decoded(runs) == tokenizer.decode(tokenizer.encode_ordinary(line))


def test_lowercasing_and_the_baselines_fall_back_to_encoding_every_line():
    assert not RunTotals(char_bpe("whitespace", lowercase=True)).by_words
    assert not RunTotals(ByteTokenizer()).by_words
    assert not RunTotals(WordTokenizer(["cat"])).by_words
    lowered = char_bpe("whitespace", lowercase=True)
    lines = CHAR_TEXT.splitlines(keepends=True)
    fast, plain = evaluate(lowered, lines), reference_evaluate(lowered, lines)
    assert fast.pop("encode_throughput_mb_s") > 0
    plain.pop("encode_throughput_mb_s")
    assert fast == plain
