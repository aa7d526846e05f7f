from hypothesis import given
from hypothesis import strategies as st

from tokenizers_app.bpe.display import token_segments, token_text, tokens_text


def test_whitespace_is_visible_and_bytes_that_are_not_utf8_are_escaped():
    assert token_text(b" hello\n") == "·hello↵"
    assert token_text("\t日本\r".encode()) == "→日本␍"
    assert token_text(b"\xe4\xbd") == "<0xE4><0xBD>"
    assert token_text("a\u3000b\x00\x1b\u200b".encode()) == "a<U+3000>b<U+0000><U+001B><U+200B>"


def test_a_list_of_tokens_shows_each_token_safely_on_one_line():
    assert tokens_text(["<s>", "a b", "\u202eevil", "bell\x07"]) == \
        "<s> a·b <U+202E>evil bell<U+0007>"
    assert tokens_text([b"\xe4", b" x"]) == "<0xE4> ·x"
    assert tokens_text([]) == "none"


def test_segments_tell_escapes_from_literal_text():
    assert token_segments(b" <0x41>\xff") == [("·", "space"), ("<0x41>", "text"),
                                               ("<0xFF>", "byte")]


@given(st.binary(max_size=40))
def test_any_bytes_show_as_their_segments(token):
    assert token_text(token) == "".join(text for text, _ in token_segments(token))


@given(st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Zs", "Zl", "Zp"),
                                      blacklist_characters="·↵→␍"), max_size=30))
def test_plain_text_shows_as_itself(text):
    assert token_text(text.encode()) == text
