import json

import pytest

from tests.bpe.format_samples import CASE_IDS, CASES, same_tokenizer, trained
from tokenizers_app.bpe import Tokenizer, load_tokenizer, save_tokenizer, train_bpe
from tokenizers_app.bpe.formats import dumps_tokenizer, loads_tokenizer
from tokenizers_app.bpe.formats.native import loads


def _native(tokenizer) -> bytes:
    return dumps_tokenizer(tokenizer, "native")["tokenizer.json"]


@pytest.mark.parametrize(("pattern", "specials"), CASES, ids=CASE_IDS)
def test_native_round_trips_byte_for_byte(tmp_path, pattern, specials):
    tokenizer = trained(pattern, specials)
    first = save_tokenizer(tokenizer, tmp_path / "a.json")[0].read_bytes()
    loaded = load_tokenizer(tmp_path / "a.json")
    second = save_tokenizer(loaded, tmp_path / "b.json")[0].read_bytes()
    assert first == second
    assert same_tokenizer(loaded, tokenizer)
    assert loaded.merge_counts == tokenizer.merge_counts


def test_training_twice_writes_identical_bytes():
    text = "low lower lowest newer newest wider widest 🙂🙂\n" * 20
    first = train_bpe([text], 300, ["<s>"], "gpt4").tokenizer()
    second = train_bpe([text], 300, ["<s>"], "gpt4").tokenizer()
    assert _native(first) == _native(second)


def test_native_json_is_versioned_readable_and_keeps_merge_counts():
    tokenizer = trained("gpt2", True)
    doc = json.loads(_native(tokenizer))
    assert (doc["format"], doc["version"], doc["algorithm"]) == ("tokenizer-registry", 1,
                                                                 "byte_bpe")
    assert doc["special_tokens"][0] == {"token": "<|endoftext|>", "id": 0}
    assert [left + right for left, right, _ in doc["merges"]][:1] == [doc["vocab"][3 + 256][1]]
    assert [count for _, _, count in doc["merges"]] == tokenizer.merge_counts
    assert "Ġ" in "".join(token for _, token in doc["vocab"])  # spaces are spelled as GPT-2 does


def test_unknown_merge_counts_are_written_as_null_and_read_back_as_none():
    tokenizer = trained("gpt2", False)
    imported = Tokenizer(tokenizer.vocab, tokenizer.merges, [], "gpt2")
    data = _native(imported)
    assert all(count is None for _, _, count in json.loads(data)["merges"])
    assert loads(data).merge_counts is None
    assert _native(loads(data)) == data


def test_a_custom_pattern_survives_the_round_trip():
    tokenizer = train_bpe(["ab ab abc, abd!"], 260, pattern=r"\w+|\W+").tokenizer()
    assert loads(_native(tokenizer)).pattern == r"\w+|\W+"


def _edited(change) -> bytes:
    doc = json.loads(_native(trained("gpt2", True)))
    change(doc)
    return json.dumps(doc).encode()


@pytest.mark.parametrize(("data", "message"), [
    (b"", "not valid JSON"),
    (b"\xff\xfe", "not UTF-8"),
    (b"[1, 2]", "not a tokenizer-registry file"),
    (b'{"format": "tokenizer-registry"}', "no 'version' field"),
    (_edited(lambda d: d.update(version=2)), "version 2"),
    (_edited(lambda d: d.update(algorithm="unigram")), "'unigram'"),
    (_edited(lambda d: d.pop("vocab")), "no 'vocab' field"),
    (_edited(lambda d: d["vocab"].append([5, "x"])), "id 5 is listed twice"),
    (_edited(lambda d: d["vocab"].append(["x"])), "vocab entry must be"),
    (_edited(lambda d: d["vocab"].append([9999, "€"])), "'€'"),
    (_edited(lambda d: d["merges"].append(["a", "b"])), "merge must be"),
    (_edited(lambda d: d["merges"][0].__setitem__(2, None)), "all known or all null"),
    (_edited(lambda d: d["special_tokens"].append({"token": "<x>"})), "no 'id' field"),
    (_edited(lambda d: d["special_tokens"].append({"token": "<x>", "id": 5})), "not id 5"),
    (_edited(lambda d: d["merges"].append(["Ġzz", "q", 1])), "not in the vocab"),
])
def test_bad_native_files_raise_value_error_naming_the_problem(data, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        loads_tokenizer({"tok.json": data}, "native")
