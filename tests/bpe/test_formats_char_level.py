import json

import pytest
import tokenizers

from tests.bpe.format_samples import TRAINING_TEXT, probe_texts
from tokenizers_app.bpe import load_tokenizer, save_tokenizer
from tokenizers_app.bpe.char_bpe import CharBPETokenizer, train_char_bpe
from tokenizers_app.bpe.formats import dumps_tokenizer, loads_tokenizer

OPTIONS = [(lowercase, split, specials) for lowercase in (False, True)
           for split in ("whitespace", "word_punct") for specials in (False, True)]
OPTION_IDS = [f"{'lower' if lc else 'cased'}-{split}-{'specials' if sp else 'unk'}"
              for lc, split, sp in OPTIONS]
_CACHE: dict = {}


def char_tokenizer(lowercase: bool, split: str, specials: bool) -> CharBPETokenizer:
    key = (lowercase, split, specials)
    if key not in _CACHE:
        tokens = ["<unk>", "<|endoftext|>", "<|pad|>"] if specials else ["<unk>"]
        _CACHE[key] = train_char_bpe([TRAINING_TEXT], 500, tokens, lowercase, split).tokenizer()
    return _CACHE[key]


def _same(a: CharBPETokenizer, b: CharBPETokenizer) -> bool:
    return (a.vocab, a.merges, a.special_ids, a.unk_token) == (b.vocab, b.merges, b.special_ids,
                                                               b.unk_token)


@pytest.mark.parametrize(("lowercase", "split", "specials"), OPTIONS, ids=OPTION_IDS)
def test_native_round_trips_byte_for_byte(tmp_path, lowercase, split, specials):
    ours = char_tokenizer(lowercase, split, specials)
    first = save_tokenizer(ours, tmp_path / "a.json")[0].read_bytes()
    back = load_tokenizer(tmp_path / "a.json")
    assert save_tokenizer(back, tmp_path / "b.json")[0].read_bytes() == first
    assert _same(back, ours) and back.merge_counts == ours.merge_counts
    assert (back.lowercase, back.pattern, back.suffix) == (lowercase, split, "</w>")


@pytest.mark.parametrize(("lowercase", "split", "specials"), OPTIONS, ids=OPTION_IDS)
def test_hugging_face_loads_the_export_and_gives_our_ids(tmp_path, lowercase, split, specials):
    ours = char_tokenizer(lowercase, split, specials)
    path = save_tokenizer(ours, tmp_path / "tokenizer.json", "hf")[0]
    theirs = tokenizers.Tokenizer.from_file(str(path))
    for text in probe_texts(specials) + ["Lower LOWEST Newer, wider!"]:
        expected = ours.encode(text, allowed_special="all")
        assert theirs.encode(text, add_special_tokens=False).ids == expected, text
    back = load_tokenizer(path)
    assert _same(back, ours) and (back.lowercase, back.pattern) == (lowercase, split)


def test_the_hf_export_uses_the_end_of_word_suffix_and_bpe_decoder():
    doc = json.loads(dumps_tokenizer(char_tokenizer(True, "word_punct", False), "hf")[
        "tokenizer.json"])
    assert doc["model"]["end_of_word_suffix"] == "</w>" and doc["model"]["unk_token"] == "<unk>"
    assert doc["normalizer"] == {"type": "Lowercase"}
    assert doc["pre_tokenizer"] == {"type": "Whitespace"}
    assert doc["decoder"] == {"type": "BPEDecoder", "suffix": "</w>"}


@pytest.mark.parametrize(("lowercase", "split", "specials"), OPTIONS, ids=OPTION_IDS)
def test_vocab_and_merges_files_reimport_to_the_same_vocab_and_merges(
        tmp_path, lowercase, split, specials):
    ours = char_tokenizer(lowercase, split, specials)
    save_tokenizer(ours, tmp_path / "gpt2", "gpt2")
    back = load_tokenizer(tmp_path / "gpt2")
    assert isinstance(back, CharBPETokenizer) and _same(back, ours)
    merges = (tmp_path / "gpt2" / "merges.txt").read_text(encoding="utf-8").splitlines()
    assert merges[0] == "#version: 0.2" and merges[1] == " ".join(ours.symbol_merges[0])


def test_char_level_cannot_be_exported_to_byte_level_only_formats():
    for format in ("tiktoken", "minbpe"):
        with pytest.raises(ValueError, match=f"the {format} format cannot hold character-level "
                                             f"BPE; download it as one of native, hf, gpt2, "
                                             f"subword-nmt"):
            dumps_tokenizer(char_tokenizer(False, "whitespace", False), format)


def _hf_edited(change) -> dict[str, bytes]:
    doc = json.loads(dumps_tokenizer(char_tokenizer(False, "whitespace", False), "hf")[
        "tokenizer.json"])
    change(doc)
    return {"tokenizer.json": json.dumps(doc).encode()}


@pytest.mark.parametrize(("files", "message"), [
    (_hf_edited(lambda d: d.update(normalizer={"type": "NFKC"})), "only Lowercase"),
    (_hf_edited(lambda d: d.update(pre_tokenizer={"type": "BertPreTokenizer"})),
     "only WhitespaceSplit or Whitespace"),
    (_hf_edited(lambda d: d["model"].update(unk_token=None)), "'unk_token' must be a string"),
    (_hf_edited(lambda d: d.update(added_tokens=[]) or d["model"]["vocab"].pop("<unk>")),
     "'<unk>' is not in the vocab"),
    ({"vocab.json": b'{"a</w>": 0}', "merges.txt": b""}, "needs the unknown token '<unk>'"),
])
def test_bad_char_level_files_raise_value_error(files, message):
    with pytest.raises(ValueError, match=message):
        loads_tokenizer(files)
