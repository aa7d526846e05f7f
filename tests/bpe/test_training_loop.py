"""Training's merge loop (``training_loop``): the tie-break, overlapping pairs, and the pairs
held out of the heap, against ``reference.reference_train``."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.bpe.corpora import SAMPLES
from tests.bpe.reference import reference_train, reference_words
from tokenizers_app.bpe import training_loop
from tokenizers_app.bpe.training import build_vocab
from tokenizers_app.bpe.training_loop import learn_merges, tie_break_key


def test_ties_go_to_the_lexicographically_greatest_pair():
    merges, counts = learn_merges({b"ab": 1, b"cd": 1, b"ca": 1}, 1)
    assert merges == [(b"c", b"d")] and counts == [1]
    assert min([(b"a", b"z"), (b"b", b"a")], key=pair_key) == (b"b", b"a")


def pair_key(pair):
    return tie_break_key(pair[0]), tie_break_key(pair[1])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.binary(min_size=1, max_size=4), st.binary(min_size=1, max_size=4)),
                min_size=1, max_size=8))
def test_the_loops_tie_break_key_picks_the_greatest_pair_of_byte_strings(pairs):
    assert min(pairs, key=pair_key) == max(pairs)


def test_overlapping_pairs_are_counted_and_merged_left_to_right():
    merges, counts = learn_merges({b"aaa": 2}, 2)
    assert merges == [(b"a", b"a"), (b"aa", b"a")]
    assert counts == [4, 2]


@pytest.mark.parametrize("defer_bits", [1, 2, 4])
def test_new_pairs_held_out_of_the_heap_come_back_in_time(defer_bits, monkeypatch):
    """New pairs far below the merge's count wait outside the heap; merging still equals the
    reference, with pairs held and let back in along the way."""
    released = []
    release = training_loop.Deferred.release

    def spy(self):
        pairs = release(self)
        released.extend(pairs)
        return pairs

    monkeypatch.setattr(training_loop, "DEFER_BITS", defer_bits)
    monkeypatch.setattr(training_loop.Deferred, "release", spy)
    texts = list(SAMPLES.values())
    expected = reference_train(texts, 256 + 700, [], "gpt2")
    words = reference_words(texts, [], "gpt2")
    merges, counts = training_loop.learn_merges(words, 700)  # the pure loop, on either path
    assert released
    assert (build_vocab(merges, []), merges, counts) == expected
