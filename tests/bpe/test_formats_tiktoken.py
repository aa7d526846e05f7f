import base64
import json

import pytest
import tiktoken

from tests.bpe.format_samples import (
    CASE_IDS,
    CASES,
    probe_texts,
    same_tokenizer,
    trained,
)
from tokenizers_app.bpe import Tokenizer, load_tokenizer, save_tokenizer
from tokenizers_app.bpe.formats import dumps_tokenizer
from tokenizers_app.bpe.formats.tiktoken import loads, recover_merges


def _peer(rank_file, sidecar_file) -> tiktoken.Encoding:
    """tiktoken built from our files, parsed here independently of our reader."""
    ranks = {}
    for line in rank_file.read_text(encoding="ascii").splitlines():
        token, rank = line.split()
        ranks[base64.b64decode(token)] = int(rank)
    sidecar = json.loads(sidecar_file.read_text(encoding="utf-8"))
    return tiktoken.Encoding(name=sidecar["name"], pat_str=sidecar["pat_str"],
                             mergeable_ranks=ranks, special_tokens=sidecar["special_tokens"],
                             explicit_n_vocab=sidecar["explicit_n_vocab"])


@pytest.mark.parametrize(("pattern", "specials"), CASES, ids=CASE_IDS)
def test_tiktoken_built_from_the_export_gives_our_ids(tmp_path, pattern, specials):
    ours = trained(pattern, specials)
    rank_file, sidecar = save_tokenizer(ours, tmp_path / "web.tiktoken", "tiktoken")
    assert sidecar.name == "web.json"
    peer = _peer(rank_file, sidecar)
    for text in probe_texts(specials):
        assert peer.encode(text, allowed_special="all") == ours.encode(text,
                                                                       allowed_special="all")
        assert peer.encode_ordinary(text) == ours.encode_ordinary(text)


@pytest.mark.parametrize(("pattern", "specials"), CASES, ids=CASE_IDS)
def test_reimporting_the_export_gives_the_same_tokenizer(tmp_path, pattern, specials):
    ours = trained(pattern, specials)
    save_tokenizer(ours, tmp_path / "web.tiktoken", "tiktoken")
    assert same_tokenizer(load_tokenizer(tmp_path / "web.tiktoken"), ours)


def test_the_sidecar_holds_the_pattern_and_special_tokens():
    files = dumps_tokenizer(trained("none", True), "tiktoken", name="web")
    sidecar = json.loads(files["web.json"])
    assert sidecar["pattern"] == "none" and sidecar["pat_str"] == r"[\s\S]+"
    assert sidecar["special_tokens"] == {"<|endoftext|>": 0, "<|pad|>": 1, "<|é|>": 2}


def test_merges_are_recovered_from_ranks():
    ranks = {bytes([b]): b for b in range(256)}
    ranks.update({b"ab": 256, b"abc": 257, b"bc": 258, b"bcd": 259})
    assert recover_merges(ranks) == [(b"a", b"b"), (b"ab", b"c"), (b"b", b"c"), (b"bc", b"d")]


def _vocab_with(*tokens: bytes) -> dict[int, bytes]:
    vocab = {b: bytes([b]) for b in range(256)}
    vocab.update({256 + i: token for i, token in enumerate(tokens)})
    return vocab


def test_a_vocab_holding_the_same_bytes_twice_cannot_be_exported():
    merges = [(b"a", b"b"), (b"b", b"c"), (b"ab", b"c"), (b"a", b"bc")]
    tokenizer = Tokenizer(_vocab_with(b"ab", b"bc", b"abc", b"abc"), merges)
    with pytest.raises(ValueError, match="token b'abc' is in the vocab twice"):
        dumps_tokenizer(tokenizer, "tiktoken")


def test_merges_out_of_rank_order_cannot_be_exported():
    tokenizer = Tokenizer(_vocab_with(b"cd", b"ab"), [(b"a", b"b"), (b"c", b"d")])
    with pytest.raises(ValueError, match=r"merge 0 \(b'a', b'b'\)"):
        dumps_tokenizer(tokenizer, "tiktoken")


def _files(**changes) -> dict[str, bytes]:
    files = dumps_tokenizer(trained("gpt2", True), "tiktoken")
    files.update(changes)
    return {name: data for name, data in files.items() if data is not None}


@pytest.mark.parametrize(("files", "message"), [
    (_files(**{"tokenizer.json": None}), "needs its sidecar tokenizer.json"),
    (_files(**{"tokenizer.json": b"{}"}), "no 'special_tokens' field"),
    (_files(**{"tokenizer.json": b'{"special_tokens": {"<s>": "0"}, "pat_str": "x"}'}),
     "must be an integer"),
    (_files(**{"tokenizer.tiktoken": b"YQ== 0\n!!! 1\n"}), "line 2: '!!!' is not base64"),
    (_files(**{"tokenizer.tiktoken": b"YQ== 0\nYQ== 1\n"}), "listed twice"),
    (_files(**{"tokenizer.tiktoken": b"YQ== zero\n"}), "expected an integer"),
    (_files(**{"tokenizer.tiktoken": b"YWJj 300\n"}), "is not made by merging"),
    (_files(**{"tokenizer.tiktoken": None}), "one tiktoken rank file"),
])
def test_bad_files_raise_value_error_naming_the_problem(files, message):
    with pytest.raises(ValueError, match=message):
        loads(files)
