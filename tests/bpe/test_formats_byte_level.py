import pytest
from tokenizers.pre_tokenizers import ByteLevel

from tokenizers_app.bpe.formats.byte_level import BYTE_TO_CHAR, spell, unspell


def test_the_alphabet_is_hugging_faces_byte_level_alphabet():
    assert sorted(BYTE_TO_CHAR) == sorted(ByteLevel.alphabet())


def test_printable_bytes_stand_for_themselves_and_space_is_shifted():
    assert spell(b"Hi!") == "Hi!"
    assert spell(b" the\n") == "\u0120the\u010a"  # "Ġthe" + "Ċ", as in GPT-2's vocab.json


def test_hugging_face_spells_every_byte_the_same_way():
    pre = ByteLevel(add_prefix_space=False, use_regex=False)
    for byte in range(256):
        text = bytes([byte]).decode("latin-1")
        if text.encode() == bytes([byte]):  # the ASCII bytes: HF sees them as text
            assert pre.pre_tokenize_str(text)[0][0] == spell(bytes([byte]))
    assert pre.pre_tokenize_str("é")[0][0] == spell("é".encode())


def test_unspell_inverts_spell_for_every_byte():
    every_byte = bytes(range(256))
    assert unspell(spell(every_byte)) == every_byte
    assert len(set(BYTE_TO_CHAR)) == 256


def test_unspell_names_a_character_outside_the_alphabet():
    with pytest.raises(ValueError, match="'€'"):
        unspell("a€")
