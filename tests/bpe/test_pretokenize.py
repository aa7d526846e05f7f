import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from tokenizers_app.bpe.pretokenize import (
    GPT2_PATTERN,
    NAMED_PATTERNS,
    PreTokenizer,
    bmp_regex,
    iter_chunks,
    pattern_name,
)
from tokenizers_app.bpe.special_tokens import special_regex, split_special

SPECIALS = ["<|endoftext|>", "<|end|>", "<|e|>\n<|f|>"]

# Text built from the characters that make pre-tokenization subtle: whitespace of every kind,
# newlines, letters, digits, punctuation, apostrophes and parts of special tokens.
ALPHABET = list(" \t\n\r\u3000\xa0aZé字'sl1!?.-<|>ef") + ["\r\n", "'ll", "<|e|>", "<|end|>"]
texts = st.lists(st.sampled_from(ALPHABET), max_size=120).map("".join)


def _pretokens(chunks, pretokenizer, specials):
    out = []
    for chunk in chunks:
        for segment, is_special in split_special(chunk, special_regex(specials)):
            out.extend([segment] if is_special else pretokenizer.split(segment))
    return out


@pytest.mark.parametrize("pattern", ["gpt2", "gpt4"])
@settings(max_examples=400, deadline=None)
@given(text=texts, cuts=st.lists(st.integers(0, 120), max_size=8), size=st.integers(1, 30))
def test_chunks_pre_tokenize_exactly_like_the_whole_text(pattern, text, cuts, size):
    pretokenizer = PreTokenizer(pattern)
    bounds = sorted({min(c, len(text)) for c in cuts} | {0, len(text)})
    blocks = [text[a:b] for a, b in zip(bounds, bounds[1:])]
    chunks = list(iter_chunks(blocks, SPECIALS, pretokenizer.line_cuts, chunk_chars=size))
    assert "".join(chunks) == text
    assert _pretokens(chunks, pretokenizer, SPECIALS) == _pretokens([text], pretokenizer, SPECIALS)


@pytest.mark.parametrize("pattern", ["none", r"\w+|\s+|[^\w\s]+"])
@settings(max_examples=200, deadline=None)
@given(text=texts, size=st.integers(1, 30))
def test_patterns_without_line_cuts_are_cut_only_after_special_tokens(pattern, text, size):
    pretokenizer = PreTokenizer(pattern)
    chunks = list(iter_chunks([text], SPECIALS, pretokenizer.line_cuts, chunk_chars=size))
    assert _pretokens(chunks, pretokenizer, SPECIALS) == _pretokens([text], pretokenizer, SPECIALS)


def test_chunks_are_cut_at_lone_newlines_between_words():
    blocks = ["one\n", "two\n", "three  \n\n", "four\n", "five"]
    chunks = list(iter_chunks(blocks, [], True, chunk_chars=4))
    assert chunks == ["one\n", "two\n", "three  \n\nfour\n", "five"]


def test_a_special_token_split_across_blocks_is_kept_whole():
    chunks = list(iter_chunks(["ab<|end", "oftext|>cd"], ["<|endoftext|>"], True, chunk_chars=2))
    assert "".join(chunks) == "ab<|endoftext|>cd"
    assert any("<|endoftext|>" in chunk for chunk in chunks)


def test_the_longest_special_token_wins_at_a_position():
    parts = list(split_special("a<|end|>b<|endoftext|>", special_regex(["<|end|>",
                                                                        "<|endoftext|>"])))
    assert parts == [("a", False), ("<|end|>", True), ("b", False), ("<|endoftext|>", True)]


def test_gpt2_pattern_splits_like_gpt2():
    assert PreTokenizer("gpt2").split("Hello world's  end!!\n") == [
        "Hello", " world", "'s", " ", " end", "!!", "\n"]


def test_gpt4_pattern_groups_digits_by_three():
    assert PreTokenizer("gpt4").split("12345 ok") == ["123", "45", " ok"]


def test_none_pattern_keeps_the_whole_text():
    assert PreTokenizer("none").split("a b  c") == ["a b  c"]


def test_a_custom_pattern_with_groups_still_yields_whole_matches():
    assert PreTokenizer(r"(\w)+|(\s)+|[^\w\s]+").split("ab, cd") == ["ab", ",", " ", "cd"]


def test_pattern_names_are_recognized_from_their_regex():
    assert pattern_name(GPT2_PATTERN) == "gpt2"
    assert pattern_name("gpt4") == "gpt4"
    assert pattern_name(r"\S+|\s+") == r"\S+|\s+"


@pytest.mark.parametrize("pattern", ["gpt2", "gpt4", "none", r"\w+|\s+|[^\w\s]+"])
def test_iter_split_gives_split_in_batches(pattern):
    text = "Hello world's  end!!\n字节 🙂 " * 50
    pretokenizer = PreTokenizer(pattern)
    batches = list(pretokenizer.iter_split(text, batch=7))
    assert [p for batch in batches for p in batch] == pretokenizer.split(text)
    assert pattern == "none" or len(batches) > 10


def test_iter_split_still_refuses_a_pattern_that_is_not_lossless():
    with pytest.raises(ValueError, match="not lossless"):
        list(PreTokenizer(r"\w+").iter_split("ab cd"))


def _every_bmp_character_in_context() -> str:
    """Each character of the BMP (surrogates included) where the patterns look at it: in runs,
    after a space, as a contraction's letters, beside digits, punctuation and newlines."""
    return "".join(f" {c}a{c}{c}'{c}{c} '{c}x1{c}2 {c}{c}{c}{c}{c} .{c}!{c}\n{c} \r{c}  {c}\t"
                   for c in map(chr, range(0x10000)))


@pytest.mark.parametrize("pattern", ["gpt2", "gpt4"])
def test_the_bmp_pattern_splits_every_bmp_character_like_regex(pattern):
    text = _every_bmp_character_in_context()
    pretokenizer = PreTokenizer(pattern)
    assert pretokenizer._matcher(text) is bmp_regex(pattern)  # the fast path is the one tested
    assert pretokenizer.split(text) == regex.findall(NAMED_PATTERNS[pattern], text)


@pytest.mark.parametrize("pattern", ["gpt2", "gpt4"])
@settings(max_examples=300, deadline=None)
@given(text=st.one_of(st.text(max_size=80), texts))
def test_split_equals_the_regex_pattern_on_any_text(pattern, text):
    parts = PreTokenizer(pattern).split(text)
    assert parts == regex.findall(NAMED_PATTERNS[pattern], text)


def test_text_above_the_bmp_goes_to_regex():
    pretokenizer = PreTokenizer("gpt2")
    assert pretokenizer._matcher("a 🙂 b") is pretokenizer.regex
    assert pretokenizer._matcher("a é b") is bmp_regex("gpt2")
    assert pretokenizer.split("x𝐀𝐁y 🙂!") == ["x𝐀𝐁y", " 🙂!"]  # math letters are letters


def test_check_sample_refuses_a_pattern_that_backtracks_without_end_or_skips_text():
    text = "a" * 40 + "b and some ordinary words\n" * 10
    with pytest.raises(ValueError, match="took over 0.2 s to split the first .* of corpus 'c'"):
        PreTokenizer(r"(a|a)+$|[\s\S]").check_sample(text, "corpus 'c'", seconds=0.2)
    with pytest.raises(ValueError, match=r"not lossless on corpus 'c': .* offset 1: ' and"):
        PreTokenizer(r"\w+").check_sample("a and b", "corpus 'c'")
    PreTokenizer(r"\w+|\s+|[^\w\s]+").check_sample(text, "corpus 'c'")
    PreTokenizer("gpt2").check_sample(text, "corpus 'c'")  # named patterns pass at once


def test_a_custom_pattern_that_backtracks_without_end_fails_in_bounded_time(monkeypatch):
    from tokenizers_app.bpe import pretokenize

    monkeypatch.setattr(pretokenize, "MATCH_SECONDS", 0.2)
    slow = PreTokenizer(r"(a|a)+$|[\s\S]")
    text = "ok " + "a" * 40 + "b"
    with pytest.raises(ValueError, match=r"took over 0.2 s to split 44 characters: it backtracks"):
        slow.split(text)
    with pytest.raises(ValueError, match="took over 0.2 s"):
        list(slow.iter_split(text))
    assert PreTokenizer(r"\w+|\s+|[^\w\s]+").split("ok a!") == ["ok", " ", "a", "!"]
