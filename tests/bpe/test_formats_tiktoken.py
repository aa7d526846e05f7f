import base64
import json

import pytest
import tiktoken

from tests.bpe.published import (
    gpt2_rank_file,
    published_constants,
    rank_file,
    tiktoken_of,
)
from tests.bpe.format_samples import (
    CASE_IDS,
    CASES,
    probe_texts,
    same_tokenizer,
    trained,
)
from tokenizers_app.bpe import Tokenizer, load_tokenizer, save_tokenizer
from tokenizers_app.bpe.formats import dumps_tokenizer, loads_tokenizer
from tokenizers_app.bpe.formats.ranks import recover_merges
from tokenizers_app.bpe.formats.tiktoken import PUBLISHED, loads, recognise


def _peer(rank_file, sidecar_file) -> tiktoken.Encoding:
    """tiktoken built from our files, parsed here independently of our reader."""
    ranks = {}
    for line in rank_file.read_text(encoding="ascii").splitlines():
        token, rank = line.split()
        ranks[base64.b64decode(token)] = int(rank)
    sidecar = json.loads(sidecar_file.read_text(encoding="utf-8"))
    return tiktoken.Encoding(name=sidecar["name"], pat_str=sidecar["pat_str"],
                             mergeable_ranks=ranks, special_tokens=sidecar["special_tokens"],
                             explicit_n_vocab=sidecar.get("explicit_n_vocab"))


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
    (_files(**{"tokenizer.json": None}), "is a bare rank file: it holds no pattern"),
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


# -- bare rank files, as tiktoken publishes its encodings ------------------------------------

@pytest.mark.parametrize("name", list(PUBLISHED))
def test_the_published_encodings_are_tiktokens_own(name):
    constants = published_constants(name)
    assert PUBLISHED[name].sha256 == constants["expected_hash"]
    assert PUBLISHED[name].special_tokens == constants["special_tokens"]


def _texts_with(specials) -> list[str]:
    return probe_texts(False) + [f"a{token}b {token}\n" for token in specials]


def _same_ids(ours, peer, specials):
    for text in _texts_with(specials):
        assert ours.encode(text, allowed_special="all") == peer.encode(text,
                                                                       allowed_special="all")
        assert ours.encode_ordinary(text) == peer.encode_ordinary(text)


@pytest.mark.parametrize("name", list(PUBLISHED))
def test_a_bare_rank_file_named_as_a_published_encoding_gets_tiktokens_ids(name, tmp_path):
    """r50k_base over GPT-2's vocabulary, the others over one
    trained here with their pattern: the ids of tiktoken.Encoding built from tiktoken's constants
    and the same file."""
    data = gpt2_rank_file() if name == "r50k_base" else rank_file(
        trained(PUBLISHED[name].pattern, False, 1000))
    ours = loads({f"{name}.tiktoken": data}, pattern=name)
    peer = tiktoken_of(name, data, tmp_path)
    assert ours.special_ids == peer._special_tokens
    _same_ids(ours, peer, ours.special_ids)
    for format in ("tiktoken", "hf", "native"):  # each download loads back
        assert same_tokenizer(loads_tokenizer(dumps_tokenizer(ours, format, name)), ours), format


def test_a_published_rank_file_is_recognised_by_its_sha256(tmp_path):
    """GPT-2's vocabulary written as tiktoken writes a rank file is r50k_base.tiktoken, byte for
    byte."""
    data = gpt2_rank_file()
    assert recognise(data) == "r50k_base"
    ours = loads({"r50k_base.tiktoken": data})
    assert ours.recognised_as == "r50k_base" and ours.pattern == "gpt2"
    _same_ids(ours, tiktoken_of("r50k_base", data, tmp_path), ours.special_ids)
    with pytest.raises(ValueError, match="is tiktoken's r50k_base .* give none with it"):
        loads({"r50k_base.tiktoken": data}, pattern="gpt4")


def test_an_empty_token_line_is_read_as_tiktoken_reads_it_and_keeps_its_id(tmp_path):
    """A rank file ending ``= 50256`` (the empty token): tiktoken's loader takes it; its id stays
    reserved, here for <|endoftext|>."""
    data = gpt2_rank_file() + b"= 50256\n"
    ours = loads({"gpt2.tiktoken": data}, pattern="r50k_base")
    assert ours.special_ids == {"<|endoftext|>": 50256} and len(ours.vocab) == 50257
    _same_ids(ours, tiktoken_of("r50k_base", data, tmp_path), ours.special_ids)
    alone = loads({"gpt2.tiktoken": data}, pattern="gpt2", special_tokens={})
    assert 50256 not in alone.vocab and max(alone.vocab) == 50255


def test_a_bare_rank_file_takes_the_pattern_and_special_tokens_given(tmp_path):
    data = rank_file(trained("gpt4", False))
    specials = {"<|end|>": 700, "<|pad|>": 705}  # a hole at 701..704
    ours = loads({"web.tiktoken": data}, pattern="gpt4", special_tokens=specials)
    assert ours.pattern == "gpt4" and ours.special_ids == specials
    assert ours.encode("hi<|pad|>", allowed_special="all")[-1] == 705
    with pytest.raises(ValueError, match="has id 5, which is the rank of"):
        loads({"web.tiktoken": data}, pattern="gpt4", special_tokens={"<|end|>": 5})


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_the_download_of_a_version_with_holes_loads_in_tiktoken(name, tmp_path):
    """cl100k_base's special tokens over a 1000-token vocabulary leave a hole of ~100k ids;
    the download leaves out explicit_n_vocab, which tiktoken would refuse."""
    ours = loads({"x.tiktoken": rank_file(trained(PUBLISHED[name].pattern, False, 1000))},
                 pattern=name)
    rank_path, sidecar_path = save_tokenizer(ours, tmp_path / "x.tiktoken", "tiktoken")
    assert "explicit_n_vocab" not in json.loads(sidecar_path.read_text())
    _same_ids(ours, _peer(rank_path, sidecar_path), ours.special_ids)
    assert same_tokenizer(load_tokenizer(rank_path), ours)
