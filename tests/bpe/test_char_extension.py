"""Extension of character-level BPE (``bpe/char_extension.py``): new characters after the
parent's ids, then new merges, equal to ``reference_extend_char`` and to Hugging Face's ids."""

import pytest

from tests.bpe.reference import reference_extend_char
from tests.bpe.test_char_bpe import CHINESE, ENGLISH, JAPANESE, hf_tokenizer
from tokenizers_app.bpe.char_bpe import train_char_bpe
from tokenizers_app.bpe.char_extension import extend_char_bpe
from tokenizers_app.bpe.parameters import check_training_parameters



def sized(vocab_size: int):
    """A run's checked parameters, as the extension trainers take them whole."""
    return check_training_parameters(algorithm="char_bpe", vocab_size=vocab_size)


@pytest.mark.parametrize("split", ["whitespace", "word_punct"])
def test_char_extension_equals_the_reference(split):
    parent = train_char_bpe([ENGLISH], 120, split=split).tokenizer()
    new_text = CHINESE + JAPANESE + ENGLISH.upper()
    result = extend_char_bpe(parent, [new_text], sized(260))
    vocab, merges, counts = reference_extend_char(parent.symbols, parent.symbol_merges,
                                                  parent.special_tokens, new_text, 260, split)
    assert result.vocab == vocab
    assert result.merges == merges
    assert result.merge_counts[len(parent.merges):] == counts


def test_every_parent_id_keeps_its_token_and_new_characters_come_first():
    parent = train_char_bpe([ENGLISH], 120).tokenizer()
    child = extend_char_bpe(parent, [CHINESE], sized(200)).tokenizer()
    assert all(child.vocab[i] == t for i, t in parent.vocab.items())
    assert child.special_ids == parent.special_ids
    first = max(parent.vocab) + 1
    assert "我" in child.symbols[first] or child.symbols[first] in CHINESE + "</w>"
    assert child.encode_ordinary(ENGLISH) == parent.encode_ordinary(ENGLISH)
    assert child.unk_id not in child.encode_ordinary(CHINESE)
    assert parent.unk_id in parent.encode_ordinary(CHINESE)


def test_the_extended_tokenizer_gives_hugging_faces_ids():
    parent = train_char_bpe([ENGLISH], 120).tokenizer()
    result = extend_char_bpe(parent, [CHINESE + JAPANESE], sized(260))
    hf = hf_tokenizer(result)
    for text in (ENGLISH, CHINESE, JAPANESE, ENGLISH + CHINESE):
        assert result.tokenizer().encode_ordinary(text) == \
            hf.encode(text, add_special_tokens=False).ids


def test_a_vocab_size_not_above_the_parents_is_refused():
    parent = train_char_bpe([ENGLISH], 120).tokenizer()
    with pytest.raises(ValueError, match="only adds tokens"):
        extend_char_bpe(parent, [CHINESE], sized(len(parent.vocab)))


def test_apply_bpe_with_the_extended_codes_cuts_text_as_our_encode(tmp_path):
    from tests.bpe.test_subword_nmt import segmented, subword_nmt
    from tokenizers_app.bpe import save_tokenizer

    parent = train_char_bpe([ENGLISH], 120).tokenizer()
    child = extend_char_bpe(parent, [CHINESE + JAPANESE], sized(260)).tokenizer()
    [codes, _vocab] = save_tokenizer(child, tmp_path / "snmt", "subword-nmt")
    assert codes.read_text().splitlines()[1:1 + len(parent.merges)] == \
        [f"{left} {right}" for left, right in parent.symbol_merges]  # the parent's codes first
    lines = [ENGLISH.split("\n")[0], CHINESE, JAPANESE]
    theirs = subword_nmt("apply-bpe", "-c", str(codes), stdin="\n".join(lines) + "\n")
    assert theirs.splitlines() == [segmented(child, line) for line in lines]
