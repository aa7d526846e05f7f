"""The core says why training made fewer merges than asked (issue 19: a run that stops early
says why)."""

from tokenizers_app.bpe.training import stop_reason, train_from_counts


def test_training_that_runs_out_of_pairs_says_so():
    result = train_from_counts({b"ab": 3}, 300)
    assert result.merges == [(b"a", b"b")]
    assert result.stop_reason == "no pair left with count >= 1 after 1 of 44 merges"


def test_pairs_rarer_than_min_frequency_stop_training_and_say_so():
    result = train_from_counts({b"abc": 3, b"xy": 1}, 300, min_frequency=2)
    assert len(result.merges) == 2
    assert result.stop_reason == "no pair left with count >= 2 after 2 of 44 merges"


def test_training_that_made_every_merge_has_no_stop_reason():
    result = train_from_counts({b"abcd": 3}, 258)
    assert len(result.merges) == 2 and result.stop_reason == ""
    assert stop_reason(5, 5, 1) == "" and stop_reason(3, 5, 2) == \
        "no pair left with count >= 2 after 3 of 5 merges"
