"""Mistral's tekken.json: a real file from mistral-common reads with mistral-common's ids, its
special slots keep theirs, and what we write loads back in mistral-common."""

from functools import lru_cache

import pytest

from tests.bpe.format_samples import SPECIALS, probe_texts, same_tokenizer, trained
from tests.bpe.mistral import mistral_tokenizer, tekken_files
from tokenizers_app.bpe.formats import detect_format, dumps_tokenizer
from tokenizers_app.bpe.formats.tekken import loads

WHITESPACE = ["    \n\n\t\t  \n", " " * 40 + "x", "\r\n\r\n  \u3000 \u00a0end"]


@lru_cache(maxsize=None)
def _read(path):
    return loads(path.read_bytes(), path.name)


@pytest.mark.parametrize("path", tekken_files(), ids=lambda p: p.name)
def test_a_real_tekken_file_gives_mistral_commons_ids(path):
    ours, theirs = _read(path), mistral_tokenizer(path)
    assert detect_format({path.name: path.read_bytes()}) == "tekken"
    assert len(ours.vocab) == theirs.n_words
    for text in probe_texts(False) + WHITESPACE:  # prose, code, CJK, emoji, whitespace runs
        assert ours.encode_ordinary(text) == theirs.encode(text, bos=False, eos=False), text
        assert ours.decode(ours.encode_ordinary(text)) == text


@pytest.mark.parametrize("path", tekken_files(), ids=lambda p: p.name)
def test_every_special_slot_keeps_its_id_and_name(path):
    ours, theirs = _read(path), mistral_tokenizer(path)
    assert len(ours.special_ids) == theirs.num_special_tokens
    for token, token_id in ours.special_ids.items():
        assert theirs.id_to_piece(token_id) == token
    assert ours.special_ids["<s>"] == theirs.bos_id and ours.special_ids["</s>"] == theirs.eos_id


def test_a_real_tekken_file_written_again_loads_in_mistral_common(tmp_path):
    path = tekken_files()[0]
    ours = _read(path)
    written = tmp_path / "tekken.json"
    written.write_bytes(dumps_tokenizer(ours, "tekken")["tekken.json"])
    theirs = mistral_tokenizer(written)
    for text in probe_texts(False) + WHITESPACE:
        assert theirs.encode(text, bos=False, eos=False) == ours.encode_ordinary(text)
    assert same_tokenizer(loads(written.read_bytes()), ours)


def test_a_tokenizer_trained_here_writes_as_tekken_with_its_special_tokens(tmp_path):
    ours = trained("gpt4", True)
    written = tmp_path / "tekken.json"
    written.write_bytes(dumps_tokenizer(ours, "tekken")["tekken.json"])
    theirs = mistral_tokenizer(written)
    assert [theirs.id_to_piece(i) for i in range(len(SPECIALS))] == SPECIALS
    for text in probe_texts(False):
        assert theirs.encode(text, bos=False, eos=False) == ours.encode_ordinary(text)
    assert same_tokenizer(loads(written.read_bytes()), ours)


def test_ids_with_holes_or_specials_last_cannot_be_written_as_tekken():
    from tokenizers_app.bpe import Tokenizer
    ours = trained("gpt2", False)
    last = Tokenizer({**ours.vocab, 700: b"<|end|>"}, ours.merges, {"<|end|>": 700}, "gpt2")
    with pytest.raises(ValueError, match="numbers special tokens first"):
        dumps_tokenizer(last, "tekken")
