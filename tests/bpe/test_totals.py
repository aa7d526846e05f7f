"""Evaluation totals: lines are grouped in order, and a run's facts are counted once (``evaluate``
as a whole is checked against the plain computation in test_metrics.py); character-level BPE
counted by words (``RunTotals.by_words``) against encoding every line and the reference."""

from collections import Counter

import pytest
import regex

from tests.bpe.reference import reference_evaluate
from tokenizers_app.bpe.baselines import ByteTokenizer, WordTokenizer
from tokenizers_app.bpe.char_bpe import train_char_bpe
from tokenizers_app.bpe.evaluation import evaluate
from tokenizers_app.bpe.totals import GROUP_CHARS, RUN_RE, RunTotals
from tokenizers_app.bpe.word_runs import line_runs, plain_lossless, split_words


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


WHITE = regex.compile(r"\s+")  # Unicode White_Space, the words' patterns' \s
LINES = ["", "\n", "  \n", "a", "a b\n", " a  b \r\n", "é <unk>\n", "x</w>y\n", "zzq",
         "a\tb\n", "a b \n", "a\r", "a\rb\n", "a\u00a0b\n", "\u3000a\n", "a\x1eb c\n",
         "a\x1c\n", "low lower\r\n", "lowest  est\n"]


@pytest.mark.parametrize("split", ["whitespace", "word_punct"])
@pytest.mark.parametrize("line", LINES)
def test_a_line_decoded_from_its_runs_is_its_decode(line, split):
    tokenizer = char_bpe(split)
    totals = RunTotals(tokenizer)
    [runs], split_runs = line_runs([line], line)
    assert split_runs == ("\x1c" not in line and "\x1e" not in line)
    assert runs == [run for run in RUN_RE.findall(line) if not WHITE.fullmatch(run)]
    totals._learn_words(runs)
    for run in runs:
        totals._spell(run)
    decoded = tokenizer.decode(tokenizer.encode_ordinary(line))
    assert totals._decoded(runs) == decoded
    if split_runs and totals.odd_runs.isdisjoint(runs):  # each run spells itself and a space
        assert plain_lossless(line) == (decoded == line.removesuffix("\n").removesuffix("\r")
                                        if line.endswith("\n") else decoded == line)


def test_the_words_of_counted_runs_are_str_splits():
    text = "".join(LINES) + "rec\x1fsep rec\x1fsep a"
    runs = [run for line in text.splitlines(keepends=True)
            for run in line_runs([line], line)[0][0]]
    assert split_words(Counter(runs)) == Counter(text.split())


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


@pytest.mark.parametrize("split", ["whitespace", "word_punct"])
def test_groups_split_in_c_and_lines_of_plain_runs_equal_the_reference(split):
    """Groups without U+001C-U+001F (runs by ``str.split``, lossless lines of runs that spell
    themselves by one match) beside one with them (runs of ``\\S``, decoded from spellings)."""
    tokenizer = char_bpe(split)
    clean = [line for line in LINES if not any(c in line for c in "\x1c\x1d\x1e\x1f")]
    unit = CHAR_TEXT.replace("\x1c\x1d", "") + "\n" + "".join(clean) + "the quick fox\n"
    lines = (unit * (3 * GROUP_CHARS // len(unit)) + CHAR_TEXT).splitlines(keepends=True)
    fast, plain = evaluate(tokenizer, lines), reference_evaluate(tokenizer, lines)
    assert fast.pop("encode_throughput_mb_s") > 0
    plain.pop("encode_throughput_mb_s")
    assert fast == plain
    assert 0 < fast["lossless_rate"] < 1


def test_python_white_space_is_unicode_white_space_and_four_separators():
    """``word_runs``' premise, over every code point: ``str.isspace`` and the words' patterns'
    ``\\s`` (``regex``) differ only at U+001C-U+001F, so ``str.split``'s pieces are the runs of
    ``\\S`` where those are absent."""
    found = [chr(c) for c in range(0x110000) if chr(c).isspace() != bool(WHITE.match(chr(c)))]
    assert found == ["\x1c", "\x1d", "\x1e", "\x1f"]
