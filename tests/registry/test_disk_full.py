"""A full disk while storing an upload, writing count parts or rendering a download: a clean
error in words, no partial file left, no row, and an existing file never replaced by part of
one (every file is written whole or not at all: ``bpe.atomic_files``)."""

import errno
import os

import pytest

from tests.registry.helpers import import_text, media_files, sample_text
from tokenizers_app.models import Corpus, CountPart, TrainingRun
from tokenizers_app.services import corpora
from tokenizers_app.services.fanout import count_corpus_part
from tokenizers_app.services.runs import execute_training_run, start_training_run

pytestmark = pytest.mark.django_db
NO_SPACE = OSError(errno.ENOSPC, "No space left on device")


class FullAfter:
    """A file whose disk fills up once ``room`` bytes are written."""

    def __init__(self, out, room: int):
        self.out, self.room = out, room

    def write(self, data):
        if len(data) > self.room:
            raise NO_SPACE
        self.room -= len(data)
        return self.out.write(data)

    def __getattr__(self, name):
        return getattr(self.out, name)


@pytest.fixture
def disk_fills_up(monkeypatch):
    """Every corpus being stored finds the disk full after its first 1 MB."""
    start = corpora.CorpusStager.__init__

    def init(self):
        start(self)
        self.out = FullAfter(self.out, 1 << 20)

    monkeypatch.setattr(corpora.CorpusStager, "__init__", init)


def body(megabytes: int) -> bytes:
    return ("text that fills the disk 字 🙂\n" * (megabytes * 30_000)).encode()[: megabytes << 20]


@pytest.mark.parametrize(("address", "status", "said"), [
    ("/corpora/upload/", 507, "the server&#x27;s disk is full: the corpus was not stored"),
    ("/api/corpora", 507, "the server's disk is full: the corpus was not stored"),
])
def test_a_full_disk_while_uploading_keeps_nothing(client, django_user_model, disk_fills_up,
                                                   settings, tmp_path, address, status, said):
    from django.core.files.uploadedfile import SimpleUploadedFile

    settings.MEDIA_ROOT = str(tmp_path / "media")
    client.force_login(django_user_model.objects.create_user("member"))
    answer = client.post(address, {
        "name": "big", "file": SimpleUploadedFile("big.txt", body(3), "text/plain")})
    assert answer.status_code == status
    assert said in answer.content.decode()
    assert media_files() == [] and not Corpus.objects.exists()


def test_a_full_disk_while_importing_a_corpus_from_the_command_line(disk_fills_up, tmp_path,
                                                                    settings):
    from django.core.management import CommandError, call_command

    settings.MEDIA_ROOT = str(tmp_path / "media")
    source = tmp_path / "big.txt"
    source.write_bytes(body(3))
    with pytest.raises(CommandError, match="the server's disk is full: the corpus was not"):
        call_command("import_corpus", str(source), "--name", "big")
    assert media_files() == [] and not Corpus.objects.exists()


def test_a_full_disk_while_writing_a_count_part_fails_the_run_in_words(settings, monkeypatch):
    settings.FANOUT_MIN_BYTES, settings.FANOUT_PART_BYTES = 1000, 4000
    corpus = import_text(sample_text(20_000), "prose")
    run = start_training_run(corpora=[corpus], tokenizer_name="t", vocab_size=400)
    execute_training_run(run_id=run.pk)
    part = CountPart.objects.filter(run=run).order_by("index").first()

    def full(fd):
        raise NO_SPACE

    monkeypatch.setattr(os, "fsync", full)
    count_corpus_part(part_id=part.pk, worker="here")

    run.refresh_from_db()
    assert run.status == TrainingRun.Status.FAILED
    assert run.error.startswith("the worker's disk is full (no space left under MEDIA_ROOT)")
    assert media_files("runs") == []  # no part file, whole or partial
    assert not run.versions.exists()


def test_a_full_disk_while_rendering_a_download_is_a_507_and_leaves_no_file(
        client, registry_data, monkeypatch):
    def full(fd):
        raise NO_SPACE

    monkeypatch.setattr(os, "fsync", full)
    api = client.get("/api/tokenizers/prose-bpe/versions/1/download?format=gpt2")
    assert api.status_code == 507
    assert api.json()["detail"].startswith("the server's disk is full: nothing was written")
    page = client.get("/tokenizers/prose-bpe/1/download/gpt2/")
    assert page.status_code == 507
    assert page.content.decode().startswith("the server's disk is full")
    assert media_files("exports") == []

