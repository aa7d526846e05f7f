from hypothesis import given, settings
from hypothesis import strategies as st

from tests.bpe.corpora import SAMPLES
from tokenizers_app.bpe import train_bpe
from tokenizers_app.bpe.baselines import ByteTokenizer, CharTokenizer
from tokenizers_app.bpe.token_groups import token_groups

TRAINED = train_bpe(list(SAMPLES.values()), 300).tokenizer()


def test_a_character_cut_between_byte_tokens_is_one_group():
    assert token_groups(ByteTokenizer(), "a€") == [
        {"ids": [97], "tokens": [b"a"], "text": "a", "bytes": b"a"},
        {"ids": [226, 130, 172], "tokens": [b"\xe2", b"\x82", b"\xac"], "text": "€",
         "bytes": "€".encode()}]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_groups_spell_the_text_and_hold_every_id_in_order(text):
    for tokenizer in (TRAINED, ByteTokenizer(), CharTokenizer()):
        groups = token_groups(tokenizer, text)
        assert "".join(g["text"] for g in groups) == text
        assert [i for g in groups for i in g["ids"]] == tokenizer.encode_ordinary(text)
        assert all(b"".join(g["tokens"]) == g["text"].encode() for g in groups)
