"""The dispatch in ``tokenizers_app.bpe.formats``: detection, paths, bad files."""

import pytest

from tests.bpe.format_samples import same_tokenizer, trained
from tokenizers_app.bpe import load_tokenizer, save_tokenizer
from tokenizers_app.bpe.formats import BYTE_FORMATS as FORMATS  # a byte-level sample
from tokenizers_app.bpe.formats import detect_format, dumps_tokenizer, loads_tokenizer

EXPECTED_FILES = {"native": ["tokenizer.json"], "hf": ["tokenizer.json"],
                  "gpt2": ["vocab.json", "merges.txt"],
                  "tiktoken": ["tokenizer.tiktoken", "tokenizer.json"],
                  "minbpe": ["tokenizer.model"], "tekken": ["tekken.json"],
                  "transformers": ["tokenizer.json", "tokenizer_config.json",
                                   "special_tokens_map.json"]}


@pytest.mark.parametrize("format", FORMATS)
def test_the_format_is_detected_from_the_file_contents(format):
    files = dumps_tokenizer(trained("gpt2", True), format)
    assert list(files) == EXPECTED_FILES[format]
    assert detect_format(files) == format
    renamed = {f"upload-{i}" if format in ("native", "hf", "minbpe", "tekken") else name: data
               for i, (name, data) in enumerate(files.items())}
    assert detect_format(renamed) == format


@pytest.mark.parametrize("format", FORMATS)
def test_save_then_load_without_naming_the_format(tmp_path, format):
    ours = trained("gpt4", True)
    target = {"gpt2": "gpt2-dir", "tiktoken": "tok.tiktoken", "minbpe": "tok.model"}.get(
        format, "tok.json")
    written = save_tokenizer(ours, tmp_path / target, format)
    assert all(path.is_file() for path in written)
    back = load_tokenizer(tmp_path / target)
    assert back.merges == ours.merges
    assert sorted(back.vocab.values()) == sorted(ours.vocab.values())


@pytest.mark.parametrize("format", FORMATS)
def test_saving_into_an_existing_folder_uses_the_default_file_names(tmp_path, format):
    written = save_tokenizer(trained("gpt2", False), tmp_path, format)
    assert sorted(path.name for path in written) == sorted(EXPECTED_FILES[format])
    assert load_tokenizer(tmp_path).merges == trained("gpt2", False).merges


def test_every_format_is_deterministic():
    for format in FORMATS:
        assert dumps_tokenizer(trained("none", True), format) == dumps_tokenizer(
            trained("none", True), format)


def test_the_tiktoken_sidecar_is_found_next_to_a_rank_file_without_suffix(tmp_path):
    save_tokenizer(trained("gpt2", True), tmp_path / "ranks", "tiktoken")
    assert (tmp_path / "ranks.json").is_file()
    assert same_tokenizer(load_tokenizer(tmp_path / "ranks"), trained("gpt2", True))


def test_a_given_format_picks_its_file_among_several():
    files = {**dumps_tokenizer(trained("gpt2", False), "gpt2"),
             "tokenizer.json": dumps_tokenizer(trained("gpt4", False), "hf")["tokenizer.json"]}
    assert detect_format(files) == "gpt2"
    assert loads_tokenizer(files, "hf").pattern == "gpt4"


@pytest.mark.parametrize(("files", "message"), [
    ({}, "no tokenizer files"),
    ({"notes.txt": b"hello"}, "cannot tell the tokenizer format of notes.txt"),
    ({"x.json": b"{not json"}, "cannot tell the tokenizer format"),
    ({"x.json": b'{"pat_str": "x"}'}, "cannot tell the tokenizer format"),
])
def test_unknown_files_raise_value_error(files, message):
    with pytest.raises(ValueError, match=message):
        loads_tokenizer(files)


def test_an_unknown_format_name_raises_value_error(tmp_path):
    with pytest.raises(ValueError, match="unknown format 'sentencepiece'"):
        save_tokenizer(trained("gpt2", False), tmp_path / "x", "sentencepiece")
    with pytest.raises(ValueError, match="unknown format"):
        loads_tokenizer({"x": b""}, "spm")


def test_a_missing_path_raises_value_error(tmp_path):
    with pytest.raises(ValueError, match="no tokenizer file or folder"):
        load_tokenizer(tmp_path / "missing.json")
    with pytest.raises(ValueError, match="holds no tokenizer files"):
        load_tokenizer(tmp_path)


def test_a_tiktoken_rank_file_cannot_be_named_like_its_sidecar(tmp_path):
    with pytest.raises(ValueError, match="cannot end in .json"):
        save_tokenizer(trained("gpt2", False), tmp_path / "x.json", "tiktoken")


def test_a_tiktoken_sidecar_never_overwrites_another_tokenizer(tmp_path):
    native = save_tokenizer(trained("gpt2", False), tmp_path / "web.json")[0]
    before = native.read_bytes()
    with pytest.raises(ValueError, match="web.json exists and is not a tiktoken sidecar"):
        save_tokenizer(trained("gpt2", False), tmp_path / "web.tiktoken", "tiktoken")
    assert native.read_bytes() == before and not (tmp_path / "web.tiktoken").exists()
    save_tokenizer(trained("gpt2", False), tmp_path / "ranks.tiktoken", "tiktoken")
    save_tokenizer(trained("gpt4", False), tmp_path / "ranks.tiktoken", "tiktoken")  # replaces
    assert load_tokenizer(tmp_path / "ranks.tiktoken").pattern == "gpt4"


@pytest.mark.parametrize("format", ["hf", "gpt2", "tiktoken"])
def test_a_full_disk_leaves_the_files_already_there_whole_and_no_part_files(tmp_path, monkeypatch,
                                                                           format):
    import errno

    from tokenizers_app.bpe import formats

    target = tmp_path / ("out" if format == "gpt2" else "tokenizer.tok")
    old = save_tokenizer(trained("gpt2", False), target, format)
    before = {path: path.read_bytes() for path in old}
    writes = []

    def full_disk(fd):  # the last file finds the disk full, after the others were written
        writes.append(fd)
        if len(writes) == len(old):
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(formats.os, "fsync", full_disk)
    with pytest.raises(OSError, match="No space left"):
        save_tokenizer(trained("gpt4", True), target, format)
    assert {path: path.read_bytes() for path in old} == before
    assert sorted(p for p in tmp_path.rglob("*") if p.is_file()) == sorted(before)
