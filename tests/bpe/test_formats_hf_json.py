import json

import pytest
import tokenizers
from tokenizers import decoders, models, pre_tokenizers, trainers

from tests.bpe.format_samples import (
    CASE_IDS,
    CASES,
    TRAINING_TEXT,
    probe_texts,
    same_tokenizer,
    trained,
)
from tokenizers_app.bpe import Tokenizer, load_tokenizer, save_tokenizer
from tokenizers_app.bpe.formats import dumps_tokenizer
from tokenizers_app.bpe.formats.hf_json import loads
from tokenizers_app.bpe.pretokenize import GPT4_PATTERN


def _text(tokenizer) -> str:
    return dumps_tokenizer(tokenizer, "hf")["tokenizer.json"].decode()


def _doc(tokenizer) -> dict:
    return json.loads(_text(tokenizer))


@pytest.mark.parametrize(("pattern", "specials"), CASES, ids=CASE_IDS)
def test_hugging_face_loads_the_export_and_gives_our_ids(tmp_path, pattern, specials):
    ours = trained(pattern, specials)
    path = save_tokenizer(ours, tmp_path / "tokenizer.json", "hf")[0]
    theirs = tokenizers.Tokenizer.from_file(str(path))
    for text in probe_texts(specials):
        expected = ours.encode(text, allowed_special="all")
        assert theirs.encode(text, add_special_tokens=False).ids == expected, text
    assert theirs.get_vocab_size() == ours.vocab_size


@pytest.mark.parametrize(("pattern", "specials"), CASES, ids=CASE_IDS)
def test_hugging_face_decodes_our_ids_to_our_text(pattern, specials):
    ours = trained(pattern, specials)
    theirs = tokenizers.Tokenizer.from_str(_text(ours))
    for text in probe_texts(specials):
        if "<|é|>" in text:
            continue  # HF runs added tokens through the ByteLevel decoder: non-ASCII breaks
        ids = ours.encode(text, allowed_special="all")
        assert theirs.decode(ids, skip_special_tokens=False) == ours.decode(ids) == text
        assert theirs.decode(ids[:1]) == ours.decode(ids[:1])  # partial UTF-8 alike


@pytest.mark.parametrize(("pattern", "specials"), CASES, ids=CASE_IDS)
def test_reimporting_the_export_gives_the_same_tokenizer(tmp_path, pattern, specials):
    ours = trained(pattern, specials)
    save_tokenizer(ours, tmp_path / "tokenizer.json", "hf")
    assert same_tokenizer(load_tokenizer(tmp_path / "tokenizer.json"), ours)


def test_the_export_has_the_documented_shape():
    doc = _doc(trained("gpt4", True))
    assert doc["model"]["merges"][0].count(" ") == 1  # "left right" strings
    assert doc["added_tokens"][0]["content"] == "<|endoftext|>"
    assert doc["added_tokens"][0]["special"] is True
    split, byte_level = doc["pre_tokenizer"]["pretokenizers"]
    assert split["pattern"] == {"Regex": GPT4_PATTERN} and split["behavior"] == "Isolated"
    assert (byte_level["type"], byte_level["use_regex"]) == ("ByteLevel", False)
    assert _doc(trained("gpt2", False))["pre_tokenizer"]["use_regex"] is True
    assert _doc(trained("none", False))["pre_tokenizer"]["use_regex"] is False
    assert doc["decoder"]["type"] == "ByteLevel"


def test_merges_written_as_pairs_are_read_too():
    doc = _doc(trained("gpt2", True))
    doc["model"]["merges"] = [merge.split(" ") for merge in doc["model"]["merges"]]
    assert same_tokenizer(loads(json.dumps(doc).encode()), trained("gpt2", True))


def test_a_tokenizer_trained_by_hugging_face_loads_and_gives_its_ids(tmp_path):
    theirs = tokenizers.Tokenizer(models.BPE())
    theirs.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    theirs.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=600, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    theirs.train_from_iterator([TRAINING_TEXT], trainer)
    theirs.save(str(tmp_path / "tokenizer.json"))
    ours = load_tokenizer(tmp_path / "tokenizer.json")
    assert ours.special_tokens == ["<|endoftext|>"] and ours.pattern == "gpt2"
    for text in probe_texts(True):
        assert ours.encode(text, allowed_special="all") == theirs.encode(text).ids, text


def test_a_special_token_spelled_like_another_token_cannot_be_exported():
    base = trained("gpt2", False)
    vocab = {**base.vocab, 10_000: b"!"}
    with pytest.raises(ValueError, match="both spelled '!'"):
        dumps_tokenizer(Tokenizer(vocab, base.merges, {"!": 10_000}, "gpt2"), "hf")


def _edited(change) -> bytes:
    doc = _doc(trained("gpt4", True))
    change(doc)
    return json.dumps(doc).encode()


@pytest.mark.parametrize(("data", "message"), [
    (b"{", "not valid JSON"),
    (b'{"version": "1.0"}', "no \"model\" object"),
    (_edited(lambda d: d["model"].update(type="WordPiece")), "'WordPiece' is not supported"),
    (_edited(lambda d: d.update(normalizer={"type": "NFKC"})), "normalizer"),
    (_edited(lambda d: d["model"].update(byte_fallback=True)), "byte_fallback"),
    (_edited(lambda d: d["pre_tokenizer"]["pretokenizers"][1].update(add_prefix_space=True)),
     "add_prefix_space"),
    (_edited(lambda d: d["pre_tokenizer"]["pretokenizers"][0].update(behavior="Removed")),
     "behavior Isolated"),
    (_edited(lambda d: d.update(pre_tokenizer={"type": "Whitespace"})), "ByteLevel"),
    (_edited(lambda d: d["model"]["merges"].append("a b c")), "merge must be"),
    (_edited(lambda d: d["model"]["vocab"].update({"x": "7"})), "integer"),
    (_edited(lambda d: d["model"]["vocab"].update({"€": 9999})), "'€'"),
    (_edited(lambda d: d["added_tokens"].append({"content": "<x>"})), "no 'id' field"),
])
def test_bad_tokenizer_json_raises_value_error_naming_the_problem(data, message):
    with pytest.raises(ValueError, match=message):
        loads(data)
