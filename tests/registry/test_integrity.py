"""What the registry holds is checked against what it recorded: ``manage.py verify`` reports a
lost merge row, a changed vocab row and a changed corpus file; a damaged version is refused by
export, download and encode, never served."""

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tokenizers_app.models import MergeRule, VocabEntry
from tokenizers_app.models import version_contents as version_records
from tokenizers_app.services import downloads as download_services

from .helpers import import_text, sample_text, train

pytestmark = pytest.mark.django_db


@pytest.fixture
def version(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    # this process keeps loaded tokenizers and rendered downloads by digest: start cold
    version_records._LOADED.clear()
    download_services._DOWNLOADS.clear()
    return train(import_text(sample_text(20_000), "prose"), vocab_size=330).versions.get()


def verify() -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("verify", stdout=out, stderr=err)
    except SystemExit as exit:
        return exit.code, out.getvalue() + err.getvalue()
    return 0, out.getvalue() + err.getvalue()


def test_verify_finds_nothing_wrong_in_an_intact_registry(version):
    assert verify() == (0, "checked 1 versions and 1 corpora: all as recorded\n")


def test_a_lost_merge_row_and_a_changed_corpus_file_are_each_reported(version):
    MergeRule.objects.filter(version=version, rank=version.merge_count - 1).delete()
    corpus = version.training_run.corpora.get()
    with open(corpus.path, "ab") as stream:
        stream.write(b"one more line\n")

    status, output = verify()
    assert status == 1
    assert f"damaged version {version.label}: its rows give another digest" in output
    assert "corpus 'prose': its file" in output and "is not what was stored" in output
    assert "2 problem(s)" in output


def test_a_changed_vocab_row_of_the_standard_layout_is_reported(version):
    assert version.standard_layout
    VocabEntry.objects.filter(version=version, token_id=300).update(token=b"forged")
    status, output = verify()
    assert status == 1 and f"damaged version {version.label}: its 330 vocab rows differ" in output


def test_a_damaged_version_is_refused_by_export_download_and_encode(version, client, tmp_path):
    MergeRule.objects.filter(version=version, rank=0).delete()
    with pytest.raises(CommandError, match="damaged version prose-bpe@1"):
        call_command("export_tokenizer", "prose-bpe@1", "--format", "hf",
                     "--out", str(tmp_path / "tokenizer.json"))
    assert not (tmp_path / "tokenizer.json").exists()
    api = "/api/tokenizers/prose-bpe/versions/1"
    download = client.get(f"{api}/download?format=hf")
    assert download.status_code == 409 and "damaged version" in download.json()["detail"]
    encode = client.post(f"{api}/encode", json.dumps({"text": "hello"}),
                         content_type="application/json")
    assert encode.status_code == 409 and "damaged version" in encode.json()["detail"]
    page = client.get("/tokenizers/prose-bpe/1/download/hf/")
    assert page.status_code == 409 and b"damaged version" in page.content
