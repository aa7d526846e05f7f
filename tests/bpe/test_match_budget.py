"""The budget for custom patterns (``bpe.match_budget``): the splits under one budget spend it
together; the one that runs past it raises PatternTooSlow within about the budget; what other
threads spend is not counted; a gate bounds the splits at once and refuses the rest in words."""

import threading
import time

import pytest
import regex

from tokenizers_app.bpe import Tokenizer
from tokenizers_app.bpe.match_budget import (
    Budget,
    Gate,
    PatternBusy,
    PatternTooSlow,
    current_budget,
    match_budget,
    thread_matches,
)
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


def burn(seconds: float) -> None:
    """Spend ``seconds`` of processor time in the calling thread."""
    started = time.thread_time()
    while time.thread_time() - started < seconds:
        sum(range(1000))


def test_another_threads_processor_time_is_not_counted():
    slowish = PreTokenizer(r"[^\n]*\n|[\s\S]")  # quadratic on a long line
    text = "ab\n" + "a" * 3000
    process = time.process_time()
    with match_budget(0.5) as budget:
        batches = slowish.iter_split(text, batch=100)
        first = next(batches)  # the split has begun: regex's clock (the process's) is running
        other = threading.Thread(target=burn, args=(0.8,))  # another request's work
        other.start()
        other.join()
        rest = [pretoken for batch in batches for pretoken in batch]
    assert first[0] == "ab\n" and "".join(first + rest) == text
    assert time.process_time() - process > 0.8  # the process spent more than the budget ...
    assert budget.seconds - budget.left < 0.5  # ... but this thread did not


def test_a_split_stopped_by_other_threads_goes_on_from_its_last_match():
    pattern = regex.compile(r"[^\n]*\n|[\s\S]")
    text = "a\n" * 2000 + "b" * 2000
    budget = Budget(5.0, "5 s")
    matches = thread_matches(pattern, text, budget)
    spans = [next(matches).span() for _ in range(1000)]
    threading.Thread(target=burn, args=(5.5,)).start()  # past the budget on the process's clock
    time.sleep(0.1)
    spans += [match.span() for match in matches]
    assert spans == [match.span() for match in pattern.finditer(text)]
    assert budget.left > 0


def test_a_gate_lets_a_few_splits_wait_and_refuses_the_others_in_words():
    gate = Gate(1, 1, wait=5.0, label="1 at once and 1 waiting")
    held, release, waited = threading.Event(), threading.Event(), []

    def holder():
        with gate.slot():
            held.set()
            release.wait()

    def waiter():
        with gate.slot():
            waited.append(True)

    threading.Thread(target=holder).start()
    held.wait()
    second = threading.Thread(target=waiter)
    second.start()
    time.sleep(0.2)  # the second one waits in the queue
    with pytest.raises(PatternBusy) as busy:
        with gate.slot():
            pass
    assert str(busy.value).startswith(
        "the server is busy splitting text with custom patterns for other requests (1 at once "
        "and 1 waiting): nothing was encoded; send the request again in a few seconds")
    assert busy.value.status == 429
    release.set()
    second.join()
    assert waited == [True]
    with gate.slot(), gate.slot():  # free again; a thread holding a slot enters again
        pass


def test_a_budget_with_a_gate_splits_through_it():
    gate = Gate(1, 0, wait=0.1)
    slowish = PreTokenizer(r"\w+|\W+")
    held, release = threading.Event(), threading.Event()

    def holder():
        with gate.slot():
            held.set()
            release.wait()

    holding = threading.Thread(target=holder)
    holding.start()
    held.wait()
    try:
        with match_budget(1.0, gate=gate), pytest.raises(PatternBusy):
            slowish.split("a b")
        with match_budget(1.0, gate=gate):  # named patterns never wait
            assert PreTokenizer("gpt2").split("a b") == ["a", " b"]
    finally:
        release.set()
        holding.join()
    with match_budget(1.0, gate=gate):
        assert slowish.split("a b") == ["a", " ", "b"]
