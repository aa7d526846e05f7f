"""Looking inside tokenizers: merge trees, token lengths, and how frequent words are cut."""

from collections import Counter

import pytest

from tests.bpe.corpora import SAMPLES
from tokenizers_app.bpe import Tokenizer, train_bpe
from tokenizers_app.bpe.baselines import ByteTokenizer
from tokenizers_app.bpe.inspection import (
    counting_words,
    frequent_word_tokens,
    merge_tree,
    token_length_histogram,
    words_split_differently,
)
from tokenizers_app.bpe.training import build_vocab


def small() -> Tokenizer:
    merges = [(b"a", b"b"), (b"ab", b"c")]
    return Tokenizer(build_vocab(merges, ["<s>"]), merges, ["<s>"], merge_counts=[5, 3])


def leaves(tree: dict) -> list[bytes]:
    found, stack = [], [tree]
    while stack:
        node = stack.pop()
        if node["children"]:
            stack.extend(reversed(node["children"]))
        else:
            found.append(node["token"])
    return found


def test_a_merge_tree_goes_down_to_bytes_with_ranks_and_counts():
    tree = merge_tree(small(), 258)  # b"abc"
    assert (tree["token"], tree["rank"], tree["count"]) == (b"abc", 1, 3)
    left, right = tree["children"]
    assert (left["token"], left["rank"], left["count"], left["id"]) == (b"ab", 0, 5, 257)
    assert (right["token"], right["rank"], right["children"]) == (b"c", None, [])
    assert leaves(tree) == [b"a", b"b", b"c"]
    assert merge_tree(small(), 0)["rank"] is None  # a special token is a leaf


def test_every_trained_token_spells_its_leaves():
    tokenizer = train_bpe(list(SAMPLES.values()), 600).tokenizer()
    for token_id, token in tokenizer.vocab.items():
        assert b"".join(leaves(merge_tree(tokenizer, token_id))) == token


def test_a_deep_tree_needs_no_recursion():
    merges = [(b"a" * n, b"a") for n in range(1, 3000)]
    tokenizer = Tokenizer(build_vocab(merges, []), merges)
    tree = merge_tree(tokenizer, max(tokenizer.vocab))
    assert len(leaves(tree)) == 3000


def test_an_unknown_id_is_a_value_error():
    with pytest.raises(ValueError, match="token id 999 is not in the vocabulary"):
        merge_tree(small(), 999)


def test_token_lengths_leave_special_tokens_out():
    assert token_length_histogram(small()) == [(1, 256), (2, 1), (3, 1)]


def test_frequent_words_come_with_their_ids_as_they_occur_after_a_space():
    assert frequent_word_tokens(ByteTokenizer(), ["b a b", "c"], top=2) == [
        ("b", 2, [32, 98]), ("a", 1, [32, 97])]


@pytest.mark.parametrize("chunk_chars", [1, 3, 7, 1 << 20])
def test_words_counted_on_the_way_are_those_of_the_whole_text(chunk_chars):
    blocks = ["the cat", " sat\n", "on\tthe", " mat\n\n", "a", "nd the", " end"]
    counts: Counter[str] = Counter()
    assert list(counting_words(blocks, counts, chunk_chars)) == blocks
    assert counts == Counter("".join(blocks).split())
    assert counts["and"] == 1 and counts["the"] == 3


def test_words_split_differently_compare_token_bytes_not_ids():
    one, two = small(), train_bpe(["ab " * 50], 258).tokenizer()
    lines = ["ab abc ab", "x"]
    per_version = [frequent_word_tokens(t, lines) for t in (one, two)]
    found = words_split_differently(per_version, [one.vocab, two.vocab])
    # one cuts " ab" as " " + "ab", two learned " ab"; "x" is the same bytes in both
    assert [(word, count) for word, count, _ in found] == [("ab", 2), ("abc", 1)]
    same = words_split_differently([per_version[0], per_version[0]], [one.vocab, one.vocab])
    assert same == []


def test_a_char_level_and_a_byte_level_version_differ_where_they_cut_a_word():
    char = {0: b"<unk>", 1: b"l", 2: b"o", 3: b"w</w>", 4: b"lo", 5: b"low</w>"}
    byte = {1: b" low", 4: b" l", 5: b"ow", 6: b" lo", 7: b"w"}
    per_version = [[("low", 5, [5]), ("lower", 2, [4, 3]), ("lowest", 1, [4, 3])],
                   [("low", 5, [1]), ("lower", 2, [4, 5]), ("lowest", 1, [6, 7])]]
    # low: one token in each (the same cut, though spelled apart); lower: lo|w against l|ow;
    # lowest: lo|w in both
    found = words_split_differently(per_version, [char, byte], ["</w>", ""])
    assert found == [("lower", 2, [[4, 3], [4, 5]])]
