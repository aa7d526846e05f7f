"""The helpers of byte-level BPE's evaluation totals, on worked examples (``evaluate`` as a
whole is checked against the plain computation in test_metrics.py)."""

import pytest

from tokenizers_app.bpe.metrics import count_cut_characters
from tokenizers_app.bpe.pretoken_totals import (
    LEAD,
    LEAD_ONE_TOKEN,
    ONE_WORD_ONE_TOKEN,
    TRAIL,
    TRAIL_ONE_TOKEN,
    count_cut_multibyte,
    count_joins,
    junction_code,
    pretoken_cuts,
    pretoken_facts,
)

BYTES = {i: bytes([i]) for i in range(256)}


def test_junction_codes_say_how_a_pre_token_meets_its_neighbours():
    assert junction_code([(0, 3)], [False], 3) == LEAD | TRAIL | LEAD_ONE_TOKEN | \
        TRAIL_ONE_TOKEN | ONE_WORD_ONE_TOKEN  # "don": one word, one token
    assert junction_code([(1, 3)], [True], 3) == TRAIL  # " do" as " d" "o"
    assert junction_code([(0, 1), (2, 3)], [False, False], 4) == LEAD | LEAD_ONE_TOKEN
    assert junction_code([], [], 2) == 0  # whitespace only


def test_joins_are_counted_where_a_word_continues_into_the_next_pre_token():
    whole = LEAD | TRAIL | LEAD_ONE_TOKEN | TRAIL_ONE_TOKEN | ONE_WORD_ONE_TOKEN
    assert count_joins(bytes([TRAIL, whole, LEAD])) == {
        "joins": 2, "joins_ending_one_token": 1, "joins_starting_one_token": 1,
        "one_token_bridges": 1}
    assert count_joins(bytes([TRAIL | TRAIL_ONE_TOKEN, 0, LEAD]))["joins"] == 0
    assert count_joins(bytes([LEAD, TRAIL]))["joins"] == 0  # a join needs TRAIL then LEAD


def test_pretoken_cuts_find_each_pre_token_in_its_line_ids():
    assert pretoken_cuts(["ab", "c"], [7, 3], {7: 2, 3: 1}) == [0, 1, 2]
    assert pretoken_cuts(["é", "x"], [195, 169, 120], {195: 1, 169: 1, 120: 1}) == [0, 2, 3]
    with pytest.raises(ValueError, match="crosses"):
        pretoken_cuts(["a", "bc"], [7, 3], {7: 2, 3: 1})


@pytest.mark.parametrize("text, ends", [("aé€", [1, 3, 5, 6]), ("aé€", [1, 3, 6]),
                                        ("🍕", [1, 2, 3, 4]), ("🍕é", [2, 3, 4, 6]),
                                        ("abc", [2, 3]), ("é🍕", [1, 6])])
def test_cut_multibyte_characters_agree_with_the_plain_count(text, ends):
    data = text.encode()
    assert count_cut_multibyte(data, ends) == count_cut_characters(text, {0, *ends})


def test_pretoken_facts_of_a_byte_split_character_and_of_a_bad_spelling():
    facts = pretoken_facts("é", (195, 169), BYTES)
    assert (facts.words, facts.one_token_words, facts.multibyte, facts.cut) == (1, 0, 1, 1)
    assert facts.own_word and facts.code == LEAD | TRAIL
    with pytest.raises(ValueError, match="do not spell"):
        pretoken_facts("ab", (97, 99), BYTES)
