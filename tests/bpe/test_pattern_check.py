"""The adversarial check of a custom pattern (``bpe.pattern_check``): patterns that backtrack
without end on some text are refused, naming the input; good ones pass."""

import re

import pytest

from tokenizers_app.bpe.pattern_check import (
    RUN_CHARS,
    adversarial_inputs,
    check_pattern,
    literal_characters,
)
from tokenizers_app.bpe.pretokenize import GPT2_PATTERN, GPT4_PATTERN, PreTokenizer
from tokenizers_app.errors import Invalid

ISSUE_18 = r"(?:(?:x|x)+)+y|[\s\S]"


def test_the_pattern_of_issue_18_is_refused_naming_the_run_that_traps_it():
    sample = "Plain prose, with words and numbers 12 and 345.\n" * 1000
    PreTokenizer(ISSUE_18).check_sample(sample, "corpus 'c'")  # the sample alone lets it pass
    with pytest.raises(Invalid, match=re.escape(
            f"pattern {ISSUE_18!r} took over 0.25 s to split a run of 3,000 'x': it backtracks "
            f"without end on such text; simplify it")) as refused:
        check_pattern(ISSUE_18)
    assert refused.value.field == "pattern" and refused.value.status == 400


@pytest.mark.parametrize("pattern, trap", [
    (r"(a+)+$|[\s\S]", "a run of 3,000 'a' followed by '!'"),
    (r"(a|a)+$|[\s\S]", "a run of 3,000 'a' followed by '!'"),
    (r"(\w|\w)+$|[\s\S]", "a run of 3,000 'a' followed by '!'"),
    (r"(?:\w+\s?)+$|[\s\S]", "a run of 3,000 'a' followed by '!'"),
    (r"(\d+)+!|[\s\S]", "a run of 3,000 '1'"),
    (r"(?:\s*)*\n|[\s\S]", "a run of 3,000 ' '"),
    (r"(?:a*)*b|[\s\S]", "a run of 3,000 'a'"),
    (r"(?:é|\u00e9)+z|[\s\S]", "a run of 3,000 'é'"),
    (r"(?:\p{L}+)+\d|[\s\S]", "a run of 3,000 'a'"),
    (r"(?:[а-я]+)+!|[\s\S]", "a run of 3,000 'а'"),
])
def test_patterns_with_nested_or_overlapping_repetitions_are_refused(pattern, trap):
    with pytest.raises(Invalid, match=re.escape(f"to split {trap}: it backtracks")):
        check_pattern(pattern)


@pytest.mark.parametrize("pattern", [
    r"\w+|\W+", r"\S+|\s+", r"\p{L}+|\p{N}+|[^\p{L}\p{N}]+", r"\w+|[^\w\s]+|\s+",
    f"(?:{GPT2_PATTERN})", f"(?:{GPT4_PATTERN})", r"(?i:[a-z]+)|[\s\S]",
])
def test_good_custom_patterns_pass_the_check(pattern):
    """Linear patterns pass (over ``CHECK_SECONDS`` in all would have refused one). The
    quadratic ``[^\n]*\n|[\s\S]`` is not among them: it took 1.3 of the 2 processor seconds
    on a quiet machine, so a loaded one may refuse it (its own test lowers the limit)."""
    assert PreTokenizer(pattern).checked  # custom: the gpt2 and gpt4 regexes in a group
    check_pattern(pattern)


def test_named_patterns_are_not_tried(monkeypatch):
    from tokenizers_app.bpe import pattern_check

    monkeypatch.setattr(pattern_check, "adversarial_inputs", None)  # called, it would fail
    for name in ("gpt2", "gpt4", "none"):
        check_pattern(name)


def test_a_pattern_slow_on_every_input_is_refused_for_the_time_in_all(monkeypatch):
    from tokenizers_app.bpe import pattern_check

    monkeypatch.setattr(pattern_check, "CHECK_SECONDS", 0.3)
    # no single input is refused (on a machine three times slower one took over 0.25 s)
    monkeypatch.setattr(pattern_check, "INPUT_SECONDS", 60)
    # quadratic on a run of anything but a newline: fine on a short text, slow on a long one
    quadratic = r"[^\n]*\n|[\s\S]"
    monkeypatch.setattr(pattern_check, "RUN_CHARS", 12_000)
    with pytest.raises(Invalid, match=r"took over 0.3 s in all to split \d+ adversarial inputs "
                                      r"\(up to a run of 12,000 .*\): it backtracks"):
        check_pattern(quadratic)


def test_literal_characters_resolve_escapes_and_leave_out_syntax():
    assert literal_characters(r"(?:(?:x|x)+)+y|\.|\x41|\p{L}") == ["x", "y", ".", "A"]
    assert literal_characters(r"(?P<word>\w+)(?i:ab){1,3}(?<=c)[^\s\d]\u00e9\n") == [
        "a", "b", "c", "é", "\n"]
    assert literal_characters(GPT2_PATTERN)[:4] == ["'", "s", "t", "r"]


def test_the_inputs_are_long_runs_of_the_patterns_characters_and_of_each_class():
    inputs = dict(adversarial_inputs(r"q+"))
    assert inputs["a run of 3,000 'q'"] == "q" * RUN_CHARS
    assert inputs["a run of 3,000 'q' followed by '!'"] == "q" * RUN_CHARS + "!"
    assert inputs["a run of 3,000 ' ' followed by 'a'"] == " " * RUN_CHARS + "a"
    for char in "aéя中1٣ \n.😀":
        assert f"a run of 3,000 {char!r}" in inputs
    assert next(iter(inputs)) == "a run of 3,000 'q'"  # the pattern's own characters first
