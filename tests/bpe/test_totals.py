"""Evaluation totals: lines are grouped in order, and a run's facts are counted once (``evaluate``
as a whole is checked against the plain computation in test_metrics.py)."""

from tokenizers_app.bpe.baselines import ByteTokenizer, WordTokenizer
from tokenizers_app.bpe.totals import GROUP_CHARS, RunTotals


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
