import pytest

from tests.bpe.format_samples import CASE_IDS, CASES, probe_texts, trained
from tokenizers_app.bpe import Tokenizer, load_tokenizer, save_tokenizer
from tokenizers_app.bpe.formats import dumps_tokenizer
from tokenizers_app.bpe.formats.minbpe import loads, minbpe_merges
from tokenizers_app.bpe.pretokenize import GPT4_PATTERN


def _tokens(tokenizer: Tokenizer, ids: list[int]) -> list[bytes]:
    return [tokenizer.vocab[i] for i in ids]


@pytest.mark.parametrize(("pattern", "specials"), CASES, ids=CASE_IDS)
def test_reimporting_the_export_gives_the_same_merges_and_tokens(tmp_path, pattern, specials):
    ours = trained(pattern, specials)
    save_tokenizer(ours, tmp_path / "web.model", "minbpe")
    back = load_tokenizer(tmp_path / "web.model")
    assert back.merges == ours.merges and back.pattern == ours.pattern
    assert sorted(back.vocab.values()) == sorted(ours.vocab.values())
    assert back.special_tokens == ours.special_tokens
    for text in probe_texts(specials):
        assert _tokens(back, back.encode(text, allowed_special="all")) == _tokens(
            ours, ours.encode(text, allowed_special="all"))


@pytest.mark.parametrize("pattern", ["gpt2", "none"])
def test_without_special_tokens_the_vocab_is_identical(pattern):
    ours = trained(pattern, False)
    assert loads(dumps_tokenizer(ours, "minbpe")["tokenizer.model"]).vocab == ours.vocab


def test_special_tokens_are_renumbered_after_the_merges():
    ours = trained("gpt4", True)
    back = loads(dumps_tokenizer(ours, "minbpe")["tokenizer.model"])
    first = 256 + len(ours.merges)
    assert back.special_ids == {"<|endoftext|>": first, "<|pad|>": first + 1,
                                "<|é|>": first + 2}
    assert back.vocab[0] == b"\x00" and back.vocab[256] == b"".join(ours.merges[0])


def test_the_model_file_has_minbpes_layout():
    lines = dumps_tokenizer(trained("gpt4", True), "minbpe")["tokenizer.model"].decode()
    lines = lines.split("\n")
    assert lines[:3] == ["minbpe v1", GPT4_PATTERN, "3"]
    assert lines[3].startswith("<|endoftext|> ")
    assert dumps_tokenizer(trained("none", False), "minbpe")["tokenizer.model"].split(
        b"\n")[1] == b""


def test_merges_become_minbpe_id_pairs():
    assert minbpe_merges([(b"a", b"b"), (b"ab", b"c")]) == [(97, 98), (256, 99)]


def test_a_hand_written_model_file_loads():
    model = b"minbpe v1\n\n1\n<|eot|> 258\n104 105\n256 33\n"
    tokenizer = loads(model)
    assert tokenizer.merges == [(b"h", b"i"), (b"hi", b"!")]
    assert tokenizer.encode("hi!hi<|eot|>", allowed_special="all") == [257, 256, 258]
    assert tokenizer.pattern == "none"


def test_a_special_token_with_whitespace_cannot_be_exported():
    base = trained("gpt2", False)
    vocab = {**base.vocab, 9000: b"<end of text>"}
    with pytest.raises(ValueError, match="'<end of text>' holds whitespace"):
        dumps_tokenizer(Tokenizer(vocab, base.merges, ["<end of text>"]), "minbpe")


def test_a_token_no_merge_makes_cannot_be_exported():
    base = trained("gpt2", False)
    vocab = {**base.vocab, 9000: b"orphan"}
    with pytest.raises(ValueError, match="b'orphan' is neither"):
        dumps_tokenizer(Tokenizer(vocab, base.merges), "minbpe")


@pytest.mark.parametrize(("data", "message"), [
    (b"minbpe v2\n\n0\n", "first line"),
    (b"minbpe v1\n", "cut short"),
    (b"minbpe v1\n\nthree\n", "expected an integer"),
    (b"minbpe v1\n\n2\n<s> 256\n", "announces 2 special tokens but has 1"),
    (b"minbpe v1\n\n0\n97 300\n", "line 4: merge \\(97, 300\\) uses an id not made yet"),
    (b"minbpe v1\n\n0\n97\n", "expected 'id1 id2'"),
    (b"minbpe v1\n\n1\n<s> 97\n", "id 97 is taken"),
    (b"minbpe v1\n\n0\n104 105\n256 3", "cut short: its last line \\('256 3'\\) has no line end"),
])
def test_bad_model_files_raise_value_error_naming_the_problem(data, message):
    with pytest.raises(ValueError, match=message):
        loads(data)


def test_a_model_cut_anywhere_is_refused_never_read_with_a_wrong_last_merge():
    data = dumps_tokenizer(trained("gpt2", False), "minbpe")
    [model] = data.values()
    for size in range(len(model) - 40, len(model)):
        if model[size - 1:size] != b"\n":
            with pytest.raises(ValueError, match="cut short"):
                loads(model[:size])
