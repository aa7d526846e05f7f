"""Tokenizer files that are not what they claim, imported over HTTP and from the command line:
each is refused in words (400, or 413 by size before the body is read), and no version, no
tokenizer row is left behind."""

import base64
import io
import json

import pytest
from django.core.management import CommandError, call_command

from tests.api.conftest import bearer
from tokenizers_app.bpe.formats import dumps_tokenizer
from tokenizers_app.models import Tokenizer, TokenizerVersion

pytestmark = pytest.mark.django_db


def files_of(version, format: str) -> dict[str, bytes]:
    return dumps_tokenizer(version.load_tokenizer(), format, "t")


def hf_with(version, change) -> dict[str, bytes]:
    [data] = files_of(version, "hf").values()
    document = json.loads(data)
    change(document)
    return {"tokenizer.json": json.dumps(document).encode()}


def drop_first_byte_rank(version) -> dict[str, bytes]:
    files = files_of(version, "tiktoken")
    name = next(n for n in files if n.endswith(".tiktoken"))
    lines = files[name].splitlines(keepends=True)
    single = next(i for i, line in enumerate(lines)
                  if len(base64.b64decode(line.split()[0])) == 1)
    return {**files, name: b"".join(lines[:single] + lines[single + 1:])}


def cut(files: dict[str, bytes], keep: float) -> dict[str, bytes]:
    [(name, data)] = files.items()
    return {name: data[: int(len(data) * keep)]}


def merge_of_unknown_tokens(document):
    document["model"]["merges"].append(["\u0100zz-not-a-token", "qq-nor-this"])


def duplicate_id(document):
    vocab = document["model"]["vocab"]
    first, second = sorted(vocab, key=vocab.get)[1:3]  # two bytes (id 0 is a special token)
    vocab[second] = vocab[first]


BAD = {
    "truncated tokenizer.json": (lambda v: cut(files_of(v, "hf"), 0.5), "JSON"),
    "truncated minbpe .model": (lambda v: cut(files_of(v, "minbpe"), 0.7), "cut short"),
    "a merge of unknown tokens": (lambda v: hf_with(v, merge_of_unknown_tokens), "merge"),
    "two tokens with one id": (lambda v: hf_with(v, duplicate_id), "used twice"),
    "tiktoken without a single byte": (drop_first_byte_rank, "byte"),
}


def post_files(client, name: str, files: dict[str, bytes], **extra):
    streams = []
    for file_name, data in files.items():
        streams.append(io.BytesIO(data))
        streams[-1].name = file_name
    return client.post(f"/api/tokenizers/{name}/import", {"files": streams}, **extra)


@pytest.mark.parametrize("case", BAD)
def test_a_bad_tokenizer_file_is_refused_in_words_and_leaves_nothing(client, registry, case):
    make, word = BAD[case]
    answer = post_files(client, "bad", make(registry["small"]),
                        **bearer(registry["member_key"]))
    assert answer.status_code == 400, answer.content
    detail = answer.json()["detail"]
    assert word.lower() in detail.lower(), detail
    assert "Traceback" not in detail
    assert not Tokenizer.objects.filter(name="bad").exists()
    assert TokenizerVersion.objects.count() == 2  # the registry's own two


def test_tokenizer_files_over_the_limit_get_413_before_the_body_is_read(client, registry,
                                                                        settings):
    settings.TOKENIZER_IMPORT_MAX_BYTES = 1000
    answer = post_files(client, "big", {"tokenizer.json": b" " * 2_000_000},
                        **bearer(registry["member_key"]))
    assert answer.status_code == 413
    assert "TOKENIZER_IMPORT_MAX_BYTES" in answer.json()["detail"]
    assert not Tokenizer.objects.filter(name="big").exists()


def test_the_command_refuses_a_file_over_the_limit_by_its_size_without_reading_it(
        settings, tmp_path, monkeypatch):
    from pathlib import Path

    settings.TOKENIZER_IMPORT_MAX_BYTES = 100 * 1024**2
    huge = tmp_path / "tokenizer.json"
    with open(huge, "wb") as out:  # 200 MB on paper, nothing on disk (a sparse file)
        out.truncate(200 * 1024**2)

    def no_reading(self):
        raise AssertionError(f"{self} was read")

    monkeypatch.setattr(Path, "read_bytes", no_reading)
    with pytest.raises(CommandError, match=r"over the limit of 104857600 bytes "
                                           r"\(TOKENIZER_IMPORT_MAX_BYTES\): nothing was read"):
        call_command("import_tokenizer", str(huge), "--tokenizer", "huge")
    assert not Tokenizer.objects.filter(name="huge").exists()


def test_an_import_of_more_files_than_django_takes_is_a_413_in_words(client, registry):
    answer = post_files(client, "many", {f"part-{i}.txt": b"x" for i in range(101)},
                        **bearer(registry["member_key"]))
    assert answer.status_code == 413
    assert answer.json()["detail"] == ("the request holds more than 100 files (setting "
                                       "DATA_UPLOAD_MAX_NUMBER_FILES)")
    assert not Tokenizer.objects.filter(name="many").exists()
