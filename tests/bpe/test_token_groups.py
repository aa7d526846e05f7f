from hypothesis import given, settings
from hypothesis import strategies as st

from tests.bpe.corpora import SAMPLES
from tokenizers_app.bpe import train_bpe
from tokenizers_app.bpe.baselines import ByteTokenizer, CharTokenizer
from tokenizers_app.bpe.token_groups import mark_differences, token_groups

TRAINED = train_bpe(list(SAMPLES.values()), 300).tokenizer()


def test_a_character_cut_between_byte_tokens_is_one_group():
    assert token_groups(ByteTokenizer(), "a€") == [
        {"ids": [97], "tokens": [b"a"], "text": "a", "bytes": b"a", "start": 0,
         "unknown": False},
        {"ids": [226, 130, 172], "tokens": [b"\xe2", b"\x82", b"\xac"], "text": "€",
         "bytes": "€".encode(), "start": 1, "unknown": False}]


def test_a_group_holding_a_char_level_unknown_token_says_so():
    from tokenizers_app.bpe.char_bpe import train_char_bpe

    tokenizer = train_char_bpe(["ab ab"], 10).tokenizer()
    groups = token_groups(tokenizer, "ab zb")
    assert [(g["text"], g["unknown"]) for g in groups] == [("ab", False), (" z", True),
                                                           ("b", False)]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_groups_spell_the_text_and_hold_every_id_in_order(text):
    for tokenizer in (TRAINED, ByteTokenizer(), CharTokenizer()):
        groups = token_groups(tokenizer, text)
        assert "".join(g["text"] for g in groups) == text
        assert [i for g in groups for i in g["ids"]] == tokenizer.encode_ordinary(text)
        assert all(b"".join(g["tokens"]) == g["text"].encode() for g in groups)
        assert [g["start"] for g in groups] == [len(text[:i].encode()) for i in
                                                 _group_char_starts(groups)]


def _group_char_starts(groups) -> list[int]:
    starts, chars = [], 0
    for group in groups:
        starts.append(chars)
        chars += len(group["text"])
    return starts


def _groups(*pieces: str) -> list[dict]:
    groups, start = [], 0
    for piece in pieces:
        groups.append({"ids": [0], "bytes": piece.encode(), "start": start})
        start += len(piece.encode())
    return groups


def test_tokens_that_another_grouping_cuts_differently_are_marked():
    first, second = _groups("a", "bc"), _groups("a", "b", "c")
    assert mark_differences([first, second]) == [1, 2]
    assert [g["differs"] for g in first] == [False, True]
    assert [g["differs"] for g in second] == [False, True, True]
    assert mark_differences([_groups("a", "bc"), _groups("ab", "c")]) == [2, 2]


def test_a_token_is_marked_when_any_other_grouping_cuts_it_differently():
    groupings = [_groups("ab", "c"), _groups("ab", "c"), _groups("a", "b", "c")]
    assert mark_differences(groupings) == [1, 1, 2]


def test_one_grouping_alone_has_no_difference():
    alone = _groups("ab", "c")
    assert mark_differences([alone]) == [0] and not any(g["differs"] for g in alone)
