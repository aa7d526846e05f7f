"""Bad input at the core's public entry points is a ValueError that names the problem."""

import json

import pytest

from tokenizers_app.bpe import Tokenizer, load_tokenizer, train_bpe
from tokenizers_app.bpe.formats import loads_tokenizer

BYTES = {i: bytes([i]) for i in range(256)}


def test_a_special_token_with_a_nul_character_is_rejected():
    with pytest.raises(ValueError, match="NUL"):
        train_bpe(["text"], 300, special_tokens=["<\x00>"])


def test_a_pattern_with_a_nul_character_is_rejected():
    with pytest.raises(ValueError, match="NUL"):
        train_bpe(["text"], 300, pattern="\x00|\\w+|\\W+")


@pytest.mark.parametrize("token_id", [2**31, -1])
def test_token_ids_out_of_range_are_rejected(token_id):
    with pytest.raises(ValueError, match=f"token id {token_id} is out of range"):
        Tokenizer({**BYTES, token_id: b"xy"}, [(b"x", b"y")])


def test_a_merge_count_out_of_range_is_rejected():
    with pytest.raises(ValueError, match="merge count"):
        Tokenizer({**BYTES, 256: b"xy"}, [(b"x", b"y")], merge_counts=[2**63])


def test_deeply_nested_json_is_a_value_error(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text('{"model": ' + "[" * 100_000 + "]" * 100_000 + "}", encoding="utf-8")
    with pytest.raises(ValueError, match="too deeply"):
        load_tokenizer(path, "hf")
    with pytest.raises(ValueError):
        load_tokenizer(path)


def test_a_char_level_hf_file_with_a_bad_suffix_or_id_is_a_value_error():
    model = {"type": "BPE", "vocab": {"<unk>": 0, "a": 1, "a</w>": 2}, "merges": [],
             "unk_token": "<unk>", "end_of_word_suffix": 5}
    doc = {"version": "1.0", "added_tokens": [], "normalizer": None,
           "pre_tokenizer": {"type": "WhitespaceSplit"}, "model": model}
    with pytest.raises(ValueError, match="end_of_word_suffix"):
        loads_tokenizer({"tokenizer.json": json.dumps(doc).encode()})
    model["end_of_word_suffix"], model["vocab"]["a"] = "</w>", "1"
    with pytest.raises(ValueError, match="whole number"):
        loads_tokenizer({"tokenizer.json": json.dumps(doc).encode()})
