"""The registry's workflows with a bucket as the store (a real SeaweedFS): uploads stream to it,
fan-out parts read only their byte range, downloads are rendered once into it and streamed
from it, ``sweep`` removes what no row holds and ``verify`` checks every object."""

import io
import time
from pathlib import Path

import pytest
from django.core.management import call_command

from tests.api.conftest import bearer
from tests.registry.helpers import build_registry_data, import_text, sample_text
from tokenizers_app.bpe import train_bpe
from tokenizers_app.bpe.formats.archive import download_file
from tokenizers_app.models import ApiKey, Corpus, CountPart, TrainingRun
from tokenizers_app.services.downloads import damaged_downloads, render_tokenizer_files
from tokenizers_app.services.fanout import count_corpus_part, merge_counted_run
from tokenizers_app.services.integrity import damaged_corpora
from tokenizers_app.services.runs import execute_training_run, start_training_run
from tokenizers_app.services.sweep import sweep_leftovers
from tokenizers_app.storage import get_store
from tokenizers_app.storage.s3 import S3Store

pytestmark = pytest.mark.django_db
MB = 1 << 20


def local_files(settings) -> list[str]:
    root = Path(settings.MEDIA_ROOT)
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) \
        if root.exists() else []


def upload(client, data: bytes, name: str, key: str):
    stream = io.BytesIO(data)
    stream.name = "web.txt"
    return client.post("/api/corpora", {"name": name, "file": stream}, **bearer(key))


@pytest.fixture
def member_key(django_user_model):
    member = django_user_model.objects.create_user("member")
    return ApiKey.objects.create_key(member, "ci")[1]


def test_an_upload_through_the_api_goes_to_the_bucket_and_no_file_stays_here(
        client, bucket, weed, settings, member_key):
    settings.STORAGE_PART_BYTES = 5 * MB
    text = sample_text(12 * MB)  # three parts
    response = upload(client, text.encode(), "big", member_key)
    assert response.status_code == 201, response.content
    corpus = Corpus.objects.get(name="big")
    assert weed.objects(bucket) == {f"registry/corpora/{corpus.sha256}.txt": len(text.encode())}
    assert get_store().read_bytes(corpus.object_name) == text.encode()
    assert weed.unfinished_uploads(bucket) == [] and local_files(settings) == []


@pytest.mark.parametrize("bad, message", [
    (b"\xff", "not valid UTF-8"), (b"\x00", "NUL byte")])
def test_a_refused_upload_leaves_no_object_and_no_unfinished_upload(
        client, bucket, weed, settings, member_key, bad, message):
    settings.STORAGE_PART_BYTES = 5 * MB
    data = sample_text(6 * MB).encode() + bad  # one part sent before the bad byte comes
    response = upload(client, data, "bad", member_key)
    assert response.status_code == 400 and message in response.json()["detail"]
    assert not Corpus.objects.exists()
    assert weed.objects(bucket) == {} and weed.unfinished_uploads(bucket) == []


def test_too_large_while_streaming_leaves_nothing(client, bucket, weed, settings, member_key):
    settings.STORAGE_PART_BYTES, settings.CORPUS_MAX_BYTES = 5 * MB, 6 * MB
    response = upload(client, b"words " * (MB + 1000), "huge", member_key)
    assert response.status_code == 413
    assert weed.objects(bucket) == {} and weed.unfinished_uploads(bucket) == []


def test_fan_out_parts_read_only_their_byte_range_and_train_the_same_merges(
        bucket, weed, settings, monkeypatch):
    settings.FANOUT_MIN_BYTES, settings.FANOUT_PART_BYTES = 1000, 8000
    text = sample_text(60_000).replace("\n\n", "<|endoftext|>")
    corpus = import_text(text, "prose")
    run = start_training_run(corpora=[corpus], tokenizer_name="t", vocab_size=500,
                             special_tokens=["<|endoftext|>"])
    execute_training_run(run_id=run.pk)
    reads, opened = [], []
    read_range, open_ = S3Store.read_range, S3Store.open
    monkeypatch.setattr(S3Store, "read_range", lambda self, name, start, end: (
        reads.append((name, start, end)), read_range(self, name, start, end))[1])
    monkeypatch.setattr(S3Store, "open", lambda self, name: (opened.append(name),
                                                             open_(self, name))[1])
    parts = list(CountPart.objects.filter(run=run).order_by("index"))
    assert len(parts) > 5
    for part in parts:
        count_corpus_part(part_id=part.pk, worker="here")
    assert reads == [(corpus.object_name, p.start, p.end) for p in parts]  # one read each
    assert opened == []  # no whole-object read of the corpus
    merge_counted_run(run_id=run.pk, attempt=1)
    run.refresh_from_db()
    assert run.status == TrainingRun.Status.SUCCEEDED, run.error
    expected = train_bpe([text], 500, special_tokens=["<|endoftext|>"])
    assert run.versions.get().load_tokenizer().merges == expected.merges
    assert not [n for n in weed.objects(bucket) if "/runs/" in n]  # the counts went


def test_a_registry_in_a_bucket_serves_pages_downloads_and_verifies(
        client, bucket, weed, settings, tmp_path):
    data = build_registry_data(settings, tmp_path)  # trained and evaluated in this process
    assert all(e.error == "" and e.status == "succeeded"
               for e in data["large"].evaluations.all()), list(data["large"].evaluations.values())
    assert client.get("/corpora/prose/").status_code == 200
    answer = client.get("/api/tokenizers/prose-bpe/versions/2/download?format=hf")
    assert answer.status_code == 200
    body = b"".join(answer.streaming_content)
    files = render_tokenizer_files(version=data["large"], format="hf")
    assert body == download_file(files, "prose-bpe", "hf")[1]
    etag = answer["ETag"]
    assert client.get("/api/tokenizers/prose-bpe/versions/2/download?format=hf",
                      HTTP_IF_NONE_MATCH=etag).status_code == 304
    stored = weed.objects(bucket)
    assert [n for n in stored if "/exports/" in n and n.endswith("tokenizer.json")]
    assert list(damaged_corpora()) == [] and list(damaged_downloads()) == []
    out = io.StringIO()
    call_command("verify", stdout=out)
    assert "all as recorded" in out.getvalue()
    assert [f for f in local_files(settings) if not f.startswith("cache/")] == []


def test_verify_finds_a_changed_corpus_object_and_a_changed_download(client, bucket, settings,
                                                                     tmp_path):
    data = build_registry_data(settings, tmp_path)
    client.get("/api/tokenizers/prose-bpe/versions/1/download?format=gpt2")
    store = get_store()
    store.write_bytes(data["corpus"].object_name, b"other bytes\n")
    [download] = [e.name for e in store.list("exports/") if e.name.endswith(".zip")]
    store.write_bytes(download, b"PK not the zip")
    assert [name for name, _ in damaged_corpora()] == ["prose"]
    [(name, problem)] = damaged_downloads()
    assert name == download and "is not what was stored" in problem


def test_sweep_removes_objects_without_a_row_and_unfinished_uploads_once_old(
        bucket, weed, settings):
    settings.STORAGE_PART_BYTES = 5 * MB
    corpus = import_text(sample_text(5000), "prose")
    done = start_training_run(corpora=[corpus], tokenizer_name="done", vocab_size=300)
    TrainingRun.objects.filter(pk=done.pk).update(status="failed", attempt=1)
    store = get_store()
    store.write_bytes(f"runs/{done.pk}/attempt-1/part-0.json", b"{}")
    store.write_bytes("corpora/" + "ab" * 32 + ".txt", b"orphan")
    store.write_bytes("corpora/incoming/killed.part", b"half")
    writer = store.writer("corpora/incoming/killed-mid-way.part")
    writer.write(b"x" * (5 * MB))  # a part sent, then the writer "dies"
    assert sweep_leftovers(min_age_seconds=3600) == {
        "count parts": [], "corpus files": [], "part files": [], "unfinished uploads": [],
        "downloads without a record": [], "evaluation parts": []}
    time.sleep(1.1)  # the store's clock has whole seconds
    removed = sweep_leftovers(min_age_seconds=0)
    assert removed == {"count parts": [f"runs/{done.pk}/attempt-1"],
                       "corpus files": ["corpora/" + "ab" * 32 + ".txt"],
                       "part files": ["corpora/incoming/killed.part"],
                       "unfinished uploads": ["corpora/incoming/killed-mid-way.part"],
                       "downloads without a record": [], "evaluation parts": []}
    assert weed.objects(bucket) == {f"registry/{corpus.object_name}": corpus.size_bytes}
    assert weed.unfinished_uploads(bucket) == []


def test_the_corpus_file_page_streams_from_the_bucket(client, bucket, django_user_model):
    corpus = import_text(sample_text(3000), "prose")
    client.force_login(django_user_model.objects.create_user("reader"))
    answer = client.get("/corpora/prose/file")
    assert answer.status_code == 200 and int(answer["Content-Length"]) == corpus.size_bytes
    assert b"".join(answer.streaming_content) == sample_text(3000).encode()


def test_deleting_an_unused_corpus_removes_its_object_from_the_bucket(
        client, bucket, weed, settings, member_key, django_capture_on_commit_callbacks):
    response = upload(client, b"a mistaken upload\n" * 100, "mistake", member_key)
    assert response.status_code == 201, response.content
    corpus = Corpus.objects.get(name="mistake")
    assert f"registry/corpora/{corpus.sha256}.txt" in weed.objects(bucket)
    with django_capture_on_commit_callbacks(execute=True):
        gone = client.delete("/api/corpora/mistake", **bearer(member_key))
    assert gone.status_code == 204
    assert weed.objects(bucket) == {} and list(damaged_corpora()) == []
    assert sweep_leftovers(min_age_seconds=0)["corpus files"] == []
