"""The budget for custom patterns (``bpe.match_budget``): the splits under one budget spend it
together; the one that runs past it raises PatternTooSlow within about the budget."""

import threading
import time

import pytest

from tokenizers_app.bpe import Tokenizer
from tokenizers_app.bpe.match_budget import PatternTooSlow, current_budget, match_budget
from tokenizers_app.bpe.pretokenize import PreTokenizer

ISSUE_18 = r"(?:(?:x|x)+)+y|[\s\S]"


def test_a_pattern_that_backtracks_stops_within_the_budget_with_the_reason():
    tokenizer = Tokenizer({i: bytes([i]) for i in range(256)}, [], pattern=ISSUE_18)
    started = time.process_time()
    with match_budget(0.3, "the 0.3 s of this test"), pytest.raises(PatternTooSlow) as slow:
        tokenizer.encode("x" * 30)
    assert time.process_time() - started < 0.3 + 0.2
    assert str(slow.value).startswith(
        "this version's pattern takes too long on this text: splitting 30 characters with "
        f"{ISSUE_18!r} ran past the 0.3 s of this test")
    assert slow.value.status == 422 and isinstance(slow.value, ValueError)


def test_the_splits_under_one_budget_spend_it_together():
    slowish = PreTokenizer(r"[^\n]*\n|[\s\S]")  # quadratic on a long line
    with match_budget(5.0) as budget:
        assert slowish.split("ab\ncd") == ["ab\n", "c", "d"]
        left = budget.left
        slowish.split("a" * 4000)
        assert budget.left < left
        budget.spend(budget.left)  # nothing left: the next split stops before it starts
        with pytest.raises(PatternTooSlow, match="ran past the 5 s allowed for splitting text"):
            slowish.split("a")
    assert current_budget() is None


def test_named_patterns_spend_nothing_and_are_never_stopped():
    with match_budget(0.001) as budget:
        assert PreTokenizer("gpt2").split("x" * 30 + " ok") == ["x" * 30, " ok"]
        budget.spend(1)
        assert PreTokenizer("gpt4").split("x" * 30) == ["x" * 30]
        assert PreTokenizer("none").split("a b") == ["a b"]


def test_a_budget_holds_in_its_own_thread_only():
    seen = {}

    def other_thread():
        seen["budget"] = current_budget()
        seen["split"] = PreTokenizer(r"\w+|\W+").split("a b")

    with match_budget(1.0) as budget:
        budget.spend(1.0)
        thread = threading.Thread(target=other_thread)
        thread.start()
        thread.join()
    assert seen == {"budget": None, "split": ["a", " ", "b"]}


def test_a_budget_is_a_positive_number_of_seconds():
    for seconds in (0, -1, float("nan")):
        with pytest.raises(ValueError, match="a match budget must be a positive number"):
            with match_budget(seconds):
                pass
