"""The command line, run as users run it: ``python -m tokenizers_app.bpe ...`` in a subprocess."""

import subprocess
import sys
from pathlib import Path

import pytest

from tests.bpe.format_samples import SPECIALS, TRAINING_TEXT
from tokenizers_app.bpe import Tokenizer, load_tokenizer
from tokenizers_app.bpe.formats import BYTE_FORMATS as FORMATS

REPO = Path(__file__).resolve().parents[2]


def cli(*args, stdin: bytes = b"") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tokenizers_app.bpe", *map(str, args)],
                          cwd=REPO, input=stdin, capture_output=True, timeout=120)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("cli")
    (folder / "corpus.txt").write_text(TRAINING_TEXT, encoding="utf-8")
    (folder / "more.txt").write_text("The end of the corpus. 🙂\n" * 20, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def native(workdir) -> Path:
    specials = [arg for token in SPECIALS[:2] for arg in ("--special-token", token)]
    result = cli("train", "--input", workdir / "corpus.txt", workdir / "more.txt",
                 "--vocab-size", 500, "--pattern", "gpt4", *specials,
                 "--out", workdir / "tok.json")
    assert result.returncode == 0, result.stderr.decode()
    return workdir / "tok.json"


def test_train_writes_the_tokenizer_and_reports_progress_on_stderr(native):
    tokenizer = load_tokenizer(native)
    assert tokenizer.vocab_size == 500 and tokenizer.pattern == "gpt4"
    assert tokenizer.special_ids == {"<|endoftext|>": 0, "<|pad|>": 1}
    result = cli("train", "--input", native.parent / "more.txt", "--vocab-size", 260,
                 "--min-frequency", 2, "--out", native.parent / "hf.json", "--format", "hf")
    assert result.returncode == 0
    assert b"merge: " in result.stderr and b"count: " in result.stderr
    assert result.stdout.decode().strip() == str(native.parent / "hf.json")
    assert load_tokenizer(native.parent / "hf.json").vocab_size == 260


def test_encode_prints_the_ids_of_the_library(native):
    tokenizer = load_tokenizer(native)
    text = "Hello<|endoftext|> wörld  🙂"
    plain = cli("encode", "--tokenizer", native, "--text", text)
    special = cli("encode", "--tokenizer", native, "--text", text, "--allow-special")
    assert plain.stdout.decode().split() == [str(i) for i in tokenizer.encode_ordinary(text)]
    assert special.stdout.decode().split() == [
        str(i) for i in tokenizer.encode(text, allowed_special="all")]
    assert "0" in special.stdout.decode().split()


def test_encode_reads_standard_input_and_decode_gives_it_back(native):
    text = "line one\n  línea dos 你好\n"
    ids = cli("encode", "--tokenizer", native, stdin=text.encode()).stdout.decode().split()
    assert ids == [str(i) for i in load_tokenizer(native).encode_ordinary(text)]
    decoded = cli("decode", "--tokenizer", native, *ids)
    assert decoded.returncode == 0 and decoded.stdout == text.encode()


@pytest.mark.parametrize("format", FORMATS)
def test_export_writes_a_tokenizer_that_encodes_the_same(native, format):
    out = native.parent / f"export-{format}"
    out = out if format == "gpt2" else out.with_suffix(".model" if format == "minbpe" else "")
    result = cli("export", "--tokenizer", native, "--format", format, "--out", out)
    assert result.returncode == 0, result.stderr.decode()
    ours, exported = load_tokenizer(native), load_tokenizer(out)
    if format == "gpt2":  # the two files hold no pattern: the reader uses gpt2's
        assert b"hold no pattern" in result.stderr and exported.pattern == "gpt2"
        exported = Tokenizer(exported.vocab, exported.merges, exported.special_ids, "gpt4")
    text = TRAINING_TEXT[:2000]
    assert [exported.vocab[i] for i in exported.encode_ordinary(text)] == [
        ours.vocab[i] for i in ours.encode_ordinary(text)]


def test_info_describes_the_tokenizer(native):
    lines = cli("info", "--tokenizer", native).stdout.decode().splitlines()
    assert "algorithm: byte_bpe" in lines and "pattern: gpt4" in lines
    assert "vocab size: 500" in lines and "merge counts: yes" in lines
    assert "special tokens: '<|endoftext|>'=0, '<|pad|>'=1" in lines


def test_a_tokenizer_format_can_be_named(native):
    result = cli("info", "--tokenizer", native, "--tokenizer-format", "hf")
    assert result.returncode == 2
    assert b"not a Hugging Face tokenizer.json" in result.stderr


@pytest.mark.parametrize("args", [
    ("info", "--tokenizer", "no/such/file.json"),
    ("encode", "--tokenizer", "{corpus}"),
    ("decode", "--tokenizer", "{native}", "999999"),
    ("decode", "--tokenizer", "{native}", "twelve"),
    ("train", "--input", "no/such/corpus.txt", "--vocab-size", "300", "--out", "{out}"),
    ("train", "--input", "{corpus}", "--vocab-size", "100", "--out", "{out}"),
    ("train", "--input", "{corpus}", "--vocab-size", "300", "--pattern", "(", "--out", "{out}"),
    ("export", "--tokenizer", "{native}", "--format", "sentencepiece", "--out", "{out}"),
    ("encode", "--tokenizer", "{native}", "--text", "<|pad|>", "--tokenizer-format", "minbpe"),
    ("frobnicate",),
    (),
])
def test_bad_input_prints_one_error_line_and_exits_with_2(native, args):
    names = {"corpus": native.parent / "corpus.txt", "native": native,
             "out": native.parent / "never.json"}
    result = cli(*(arg.format(**names) for arg in args))
    assert result.returncode == 2
    assert b"Traceback" not in result.stderr
    assert len(result.stderr.decode().strip().splitlines()) == 1
    assert b"error: " in result.stderr
    assert not (native.parent / "never.json").exists()


def test_text_that_is_not_utf8_on_standard_input_is_an_error(native):
    result = cli("encode", "--tokenizer", native, stdin=b"caf\xe9")
    assert result.returncode == 2 and b"utf-8" in result.stderr.lower()


def test_train_char_level_bpe_and_use_it(workdir):
    out = workdir / "char.json"
    result = cli("train", "--algorithm", "char_bpe", "--input", workdir / "corpus.txt",
                 "--vocab-size", 300, "--split", "word_punct", "--lowercase", "--out", out)
    assert result.returncode == 0, result.stderr.decode()
    tokenizer = load_tokenizer(out)
    assert tokenizer.algorithm == "char_bpe" and tokenizer.special_tokens == ["<unk>"]
    ids = cli("encode", "--tokenizer", out, "--text", "The Lazy dog").stdout.decode().split()
    assert ids == [str(i) for i in tokenizer.encode_ordinary("The Lazy dog")]
    assert cli("decode", "--tokenizer", out, *ids).stdout == b"the lazy dog"
    info = cli("info", "--tokenizer", out).stdout.decode().splitlines()
    assert "split: word_punct" in info and "lowercase: yes" in info
    bad = cli("train", "--algorithm", "char_bpe", "--pattern", "gpt4", "--input",
              workdir / "corpus.txt", "--vocab-size", 300, "--out", out)
    assert bad.returncode == 2 and b"--pattern is for byte_bpe" in bad.stderr
