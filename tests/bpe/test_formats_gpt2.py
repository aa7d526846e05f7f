import json

import pytest
import tiktoken

from tests.bpe.format_samples import (
    CASE_IDS,
    CASES,
    TRAINING_TEXT,
    probe_texts,
    same_tokenizer,
    trained,
)
from tests.fixtures import gpt2_fixture_dir
from tokenizers_app.bpe import load_tokenizer, save_tokenizer
from tokenizers_app.bpe.formats import dumps_tokenizer
from tokenizers_app.bpe.formats.byte_level import unspell
from tokenizers_app.bpe.formats.gpt2 import loads
from tokenizers_app.bpe.pretokenize import GPT2_PATTERN


@pytest.fixture(scope="module")
def gpt2_dir():
    return gpt2_fixture_dir()


def test_the_gpt2_fixture_loads_with_its_sizes_and_end_of_text_token(gpt2_dir):
    tokenizer = load_tokenizer(gpt2_dir)
    assert (tokenizer.vocab_size, len(tokenizer.merges)) == (50257, 50000)
    assert tokenizer.special_ids == {"<|endoftext|>": 50256}
    assert tokenizer.pattern == "gpt2"


def test_the_gpt2_fixture_encodes_like_tiktoken_built_from_the_same_files(gpt2_dir):
    vocab = json.loads((gpt2_dir / "vocab.json").read_text(encoding="utf-8"))
    ranks = {unspell(token): rank for token, rank in vocab.items() if token != "<|endoftext|>"}
    peer = tiktoken.Encoding("gpt2-fixture", pat_str=GPT2_PATTERN, mergeable_ranks=ranks,
                             special_tokens={"<|endoftext|>": 50256})
    ours = load_tokenizer(gpt2_dir)
    for text in probe_texts(False) + ["Hello world<|endoftext|> again", TRAINING_TEXT[:3000]]:
        assert ours.encode(text, allowed_special="all") == peer.encode(text,
                                                                       allowed_special="all")


@pytest.mark.parametrize(("pattern", "specials"), CASES, ids=CASE_IDS)
def test_reimporting_the_export_gives_the_same_merges_vocab_and_special_tokens(
        tmp_path, pattern, specials):
    ours = trained(pattern, specials)
    save_tokenizer(ours, tmp_path / "gpt2", "gpt2")
    back = load_tokenizer(tmp_path / "gpt2")
    assert (back.merges, back.vocab, back.special_ids) == (ours.merges, ours.vocab,
                                                           ours.special_ids)
    assert back.pattern == "gpt2"  # the files hold no pattern


def test_the_files_are_read_with_the_pattern_the_reader_is_told():
    from tokenizers_app.bpe.formats import dumps_tokenizer, loads_tokenizer

    files = dumps_tokenizer(trained("gpt4", ()), "gpt2")
    assert loads(files, pattern="gpt4").pattern == "gpt4"
    assert loads_tokenizer(files, pattern="gpt4").pattern == "gpt4"
    with pytest.raises(ValueError, match="name their own pattern"):
        loads_tokenizer(dumps_tokenizer(trained("gpt4", ()), "hf"), pattern="gpt4")


def test_merges_are_read_with_or_without_the_version_header():
    files = dumps_tokenizer(trained("gpt2", True), "gpt2")
    assert files["merges.txt"].startswith(b"#version: 0.2\n")
    without = {**files, "merges.txt": files["merges.txt"].split(b"\n", 1)[1]}
    assert same_tokenizer(loads(without), loads(files))
    assert same_tokenizer(loads(files), trained("gpt2", True))


def test_the_export_is_deterministic_and_spells_tokens_like_gpt2():
    files = dumps_tokenizer(trained("gpt2", True), "gpt2")
    assert files == dumps_tokenizer(trained("gpt2", True), "gpt2")
    vocab = json.loads(files["vocab.json"])
    assert vocab["Ġ"] == 3 + ord(" ") and vocab["<|endoftext|>"] == 0


def test_special_tokens_are_the_entries_no_merge_makes(tmp_path):
    files = dumps_tokenizer(trained("gpt2", False), "gpt2")
    vocab = json.loads(files["vocab.json"])
    vocab["<|extra|>"] = len(vocab)
    tokenizer = loads({**files, "vocab.json": json.dumps(vocab).encode()})
    assert tokenizer.special_ids == {"<|extra|>": len(vocab) - 1}


@pytest.mark.parametrize(("change", "message"), [
    ({"merges.txt": None}, "merges.txt is missing"),
    ({"vocab.json": b"[]"}, "must be a JSON object"),
    ({"vocab.json": b'{"a": "1"}'}, "must be an integer"),
    ({"vocab.json": b'{"a": 1, "b": 1}'}, "used twice"),
    ({"merges.txt": b"#version: 0.2\nab\n"}, "line 2"),
    ({"merges.txt": b"\xff"}, "not UTF-8"),
    ({"merges.txt": b"#version: 0.2\nq zz\n"}, "is neither a byte nor made by a merge"),
    ({"extra merge": b"q zz\n"}, "not in the vocab"),
])
def test_bad_files_raise_value_error_naming_the_problem(change, message):
    files = dumps_tokenizer(trained("gpt2", False), "gpt2")
    if "extra merge" in change:
        change = {"merges.txt": files["merges.txt"] + change["extra merge"]}
    files = {**files, **change}
    files = {name: data for name, data in files.items() if data is not None}
    with pytest.raises(ValueError, match=message):
        loads(files)
