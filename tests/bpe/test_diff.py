"""``bpe/diff.py``: the verdicts between two vocabs and a text encoded by both."""

from tokenizers_app.bpe.diff import diff_encodings, diff_vocabs, script_of


def test_identical_extends_same_tokens_and_incompatible():
    a = {0: b"a", 1: b"b"}
    assert diff_vocabs(a, dict(a)).verdict == "identical"
    grown = diff_vocabs(a, {**a, 2: b"ab"}, old_merges=[], new_merges=[(b"a", b"b")])
    assert (grown.verdict, grown.new_ids, grown.merges_added) == ("extends", (2, 2), 1)
    swapped = diff_vocabs(a, {0: b"b", 1: b"a"})
    assert swapped.verdict == "same_tokens_other_ids" and swapped.id_map == {0: 1, 1: 0}
    other = diff_vocabs(a, {0: b"a", 1: b"c"})
    assert other.verdict == "incompatible" and other.changed == [(1, b"b", b"c")]
    assert other.added == [(1, b"c")] and other.removed == [(1, b"b")]


def test_a_token_that_changes_role_is_another_token():
    found = diff_vocabs({0: b"<s>"}, {0: b"<s>"}, old_specials=["<s>"], new_specials=[])
    assert found.verdict == "incompatible"


def test_other_merges_over_the_same_ids_are_not_an_extension():
    found = diff_vocabs({0: b"a"}, {0: b"a"}, old_merges=[(b"a", b"a")],
                        new_merges=[(b"b", b"b")])
    assert found.verdict == "incompatible" and not found.keeps_ids
    assert (found.merges_added, found.merges_removed) == (1, 1)


def test_encodings_count_unchanged_lines_per_script():
    found = diff_encodings(list, str.split, ["ab", "我们", "a b"])
    assert found["lines"] == 3 and found["unchanged_lines"] == 0
    assert found["scripts"]["Han"]["tokens_before"] == 2
    assert script_of("12 数字") == "Han" and script_of("123") == "none"
