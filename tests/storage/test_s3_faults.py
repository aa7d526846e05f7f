"""Faults with a bucket as the store (a real SeaweedFS, killed with SIGKILL and started again):
the store stopped in the middle of an upload, of a run's counting and of a download, and a
worker killed in the middle of a multipart write. Each leaves zero or one complete version, no
row that points at a missing object, no orphan object after a sweep, and ``verify`` clean; and
when the store is back, work goes on."""

import io
import time

import pytest
from django.core.management import call_command

from tests.api.conftest import bearer
from tests.registry.helpers import import_text, made_up_words, sample_text, wait_until
from tokenizers_app.errors import StoreUnavailable
from tokenizers_app.models import ApiKey, Corpus, CountPart, TokenizerVersion, TrainingRun
from tokenizers_app.services.fanout import count_corpus_part, merge_counted_run
from tokenizers_app.services.runs import execute_training_run, reap_runs, start_training_run
from tokenizers_app.services.sweep import sweep_leftovers
from tokenizers_app.storage import get_store
from tokenizers_app.storage.s3 import S3Store, S3Writer

from .conftest import point_settings_at

pytestmark = [pytest.mark.slow, pytest.mark.django_db]
MB = 1 << 20


@pytest.fixture
def store_of_its_own(own_weed, settings, tmp_path):
    """A bucket on a server of the test's own (``own_weed``), which the test may stop."""
    bucket = own_weed.new_bucket()
    settings.MEDIA_ROOT = str(tmp_path / "media")
    point_settings_at(settings, own_weed, bucket)
    settings.STORAGE_PART_BYTES = 5 * MB
    return bucket


@pytest.fixture
def member_key(django_user_model):
    return ApiKey.objects.create_key(django_user_model.objects.create_user("member"), "ci")[1]


def upload(client, data: bytes, name: str, key: str):
    stream = io.BytesIO(data)
    stream.name = "web.txt"
    return client.post("/api/corpora", {"name": name, "file": stream}, **bearer(key))


def assert_clean_after_a_sweep(server, bucket: str, corpora: int) -> None:
    """The sweep leaves only what rows hold, nothing unfinished, and verify finds all as
    recorded."""
    time.sleep(1.1)  # the store's clock has whole seconds
    sweep_leftovers(min_age_seconds=0)
    names = sorted(server.objects(bucket))
    held = sorted(f"registry/{c.object_name}" for c in Corpus.objects.all())
    assert [n for n in names if "/corpora/" in n] == held and len(held) == corpora
    assert not [n for n in names if "/runs/" in n or n.endswith(".part")]
    assert server.unfinished_uploads(bucket) == []
    out = io.StringIO()
    call_command("verify", stdout=out)
    assert "all as recorded" in out.getvalue()


def assert_no_internals(text: str, server, bucket: str, *keys: str) -> None:
    """``text`` names no host, port, bucket, object key or multipart upload id of the store."""
    host_port = server.endpoint.split("//")[1]
    for internal in [host_port, host_port.split(":")[1], "127.0.0.1", "localhost", bucket,
                     "registry/", "uploadId", "UploadId", *keys]:
        assert internal not in text, f"{internal!r} is in {text!r}"


def test_the_503_of_a_store_that_stops_names_no_address_bucket_key_or_upload_id(
        client, own_weed, store_of_its_own, member_key, monkeypatch, caplog, django_user_model):
    """The answer says "the object store does not answer"; the log keeps the address, the key
    and the upload id, for whoever runs the server."""
    send, seen = S3Writer._send, {}

    def send_then_stop(self, chunk):
        send(self, chunk)
        seen.update(key=self.key, upload_id=self.upload_id)
        own_weed.stop()

    monkeypatch.setattr(S3Writer, "_send", send_then_stop)
    caplog.set_level("WARNING", logger="tokenizers_app.storage.s3")
    response = upload(client, sample_text(12 * MB).encode(), "big", member_key)
    assert response.status_code == 503
    detail = response.json()["detail"]
    assert detail == ("the object store does not answer: could not store a file; nothing was "
                      "written; try again once the store answers")
    assert seen["upload_id"] and seen["key"].startswith("registry/")
    assert_no_internals(response.content.decode(), own_weed, store_of_its_own, seen["key"],
                        seen["upload_id"], seen["key"].rsplit("/", 1)[-1])
    assert own_weed.endpoint in caplog.text and seen["key"] in caplog.text
    assert seen["upload_id"] in caplog.text  # boto's error names it: the log keeps it
    own_weed.start()
    client.force_login(django_user_model.objects.create_user("uploader"))
    stream = io.BytesIO(sample_text(12 * MB).encode())
    stream.name = "web.txt"
    page = client.post("/corpora/upload/", {"name": "big", "file": stream})  # the page's form
    assert page.status_code == 503 and "the object store does not answer" in page.content.decode()
    assert_no_internals(page.content.decode(), own_weed, store_of_its_own)
    monkeypatch.undo()
    own_weed.start()
    assert not Corpus.objects.exists()


def test_the_store_stopped_mid_upload_is_a_503_in_words_and_leaves_no_row(
        client, own_weed, store_of_its_own, member_key, monkeypatch):
    send = S3Writer._send

    def send_then_stop(self, chunk):
        send(self, chunk)
        own_weed.stop()  # after the first part: the store goes away mid-upload

    monkeypatch.setattr(S3Writer, "_send", send_then_stop)
    response = upload(client, sample_text(12 * MB).encode(), "big", member_key)
    assert response.status_code == 503
    assert "does not answer" in response.json()["detail"]
    assert "nothing was written" in response.json()["detail"]
    assert not Corpus.objects.exists()
    assert_no_internals(response.content.decode(), own_weed, store_of_its_own)

    monkeypatch.undo()
    own_weed.start()
    assert own_weed.objects(store_of_its_own) == {}  # the part sent is no object
    again = upload(client, sample_text(12 * MB).encode(), "big", member_key)
    assert again.status_code == 201  # the store is back: work goes on
    assert_clean_after_a_sweep(own_weed, store_of_its_own, corpora=1)


def test_the_store_stopped_mid_count_fails_the_run_saying_why_then_a_new_run_succeeds(
        own_weed, store_of_its_own, settings):
    settings.FANOUT_MIN_BYTES, settings.FANOUT_PART_BYTES = 1000, 8000
    corpus = import_text(sample_text(50_000), "prose")
    run = start_training_run(corpora=[corpus], tokenizer_name="t", vocab_size=400)
    execute_training_run(run_id=run.pk)
    parts = list(CountPart.objects.filter(run=run).order_by("index"))
    count_corpus_part(part_id=parts[0].pk, worker="here")
    own_weed.stop()
    count_corpus_part(part_id=parts[1].pk, worker="here")
    run.refresh_from_db()
    assert run.status == TrainingRun.Status.FAILED
    assert "does not answer" in run.error and "could not read" in run.error
    assert_no_internals(run.error, own_weed, store_of_its_own)  # the run page shows it
    assert not TokenizerVersion.objects.exists()

    own_weed.start()
    again = start_training_run(corpora=[corpus], tokenizer_name="t", vocab_size=400)
    execute_training_run(run_id=again.pk)
    for part in CountPart.objects.filter(run=again):
        count_corpus_part(part_id=part.pk, worker="here")
    merge_counted_run(run_id=again.pk, attempt=1)
    again.refresh_from_db()
    assert again.status == TrainingRun.Status.SUCCEEDED, again.error
    assert TokenizerVersion.objects.count() == 1
    assert_clean_after_a_sweep(own_weed, store_of_its_own, corpora=1)


def test_the_store_stopped_mid_download_is_a_503_then_the_download_is_whole(
        client, own_weed, store_of_its_own, settings, tmp_path, monkeypatch):
    from tests.registry.helpers import build_registry_data

    build_registry_data(settings, tmp_path)
    point_settings_at(settings, own_weed, store_of_its_own)
    write = S3Store.write_bytes

    def write_then_stop(self, name, data):
        write(self, name, data)
        if name.endswith(".gz"):
            own_weed.stop()  # the gzip is stored, the file and its record are not

    monkeypatch.setattr(S3Store, "write_bytes", write_then_stop)
    url = "/api/tokenizers/prose-bpe/versions/2/download?format=hf"
    answer = client.get(url)
    assert answer.status_code == 503 and "does not answer" in answer.json()["detail"]
    assert_no_internals(answer.content.decode(), own_weed, store_of_its_own)
    monkeypatch.undo()
    own_weed.start()
    time.sleep(1.1)
    removed = sweep_leftovers(min_age_seconds=0)
    assert [n.rsplit("/", 1)[-1] for n in removed["downloads without a record"]] == [
        "prose-bpe-tokenizer.json.gz"]
    whole = client.get(url)
    assert whole.status_code == 200
    body = b"".join(whole.streaming_content)
    assert body == b"".join(client.get(url).streaming_content) and body.startswith(b"{")
    assert_clean_after_a_sweep(own_weed, store_of_its_own, corpora=2)


def test_the_store_stopped_while_a_file_streams_ends_the_stream_and_serves_it_again(
        client, own_weed, store_of_its_own, django_user_model):
    text = sample_text(24 * MB).encode()
    corpus = import_text(text.decode(), "big")
    client.force_login(django_user_model.objects.create_user("reader"))
    answer = client.get("/corpora/big/file")
    chunks = iter(answer.streaming_content)
    received = len(next(chunks))
    own_weed.stop()
    with pytest.raises(StoreUnavailable, match="does not answer"):
        for chunk in chunks:
            received += len(chunk)
    assert received < corpus.size_bytes  # the client sees a short body: its download failed
    own_weed.start()
    assert get_store().read_bytes(corpus.object_name) == text  # whole, once the store is back


@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_write_leaves_no_object_and_the_run_ends_with_one_version(
        weed, own_workers, registry_environment, settings, tmp_path):
    from tests.conftest import database_env

    bucket = weed.new_bucket()
    point_settings_at(settings, weed, bucket)
    settings.MEDIA_ROOT = str(tmp_path / "media")
    pause = tmp_path / "pause"
    pause.mkdir()
    env = {**weed.env(bucket), **database_env(), "FANOUT_MIN_BYTES": "1000000",
           "FANOUT_PART_BYTES": "8000000", "STORAGE_PART_BYTES": str(5 * MB)}
    # one count part, whose counts (6 MB) go in two upload parts
    corpus = import_text(made_up_words(3_500_000, seed=5), "made-up")
    killed = own_workers("paused", **env, MEDIA_ROOT=str(tmp_path / "a"),
                          TEST_WORKER_INCLUDE="tests.storage.pause_writes",
                          TEST_PAUSE_WRITES_DIR=str(pause))
    run = start_training_run(corpora=[corpus], tokenizer_name="t", vocab_size=300)
    wait_until(lambda: (pause / "paused").exists(), 120,
               f"the count file's first part to be sent\n{killed.log()}", interval=0.2)
    killed.kill()
    written = (pause / "paused").read_text()
    assert written == f"runs/{run.pk}/attempt-1/part-0.json"
    assert weed.unfinished_uploads(bucket) == [f"registry/{written}"]
    assert not [n for n in weed.objects(bucket) if "/runs/" in n]  # no object, whole or half

    replacement = own_workers("replacement", **env, MEDIA_ROOT=str(tmp_path / "b"))
    wait_until(lambda: reap_runs(stale_seconds=1)["requeued"], 60, "the reaper to requeue")

    def finished():
        run.refresh_from_db()
        return run.is_finished

    wait_until(finished, 180, f"run {run.pk} to finish\n{replacement.log()}", interval=0.5)
    assert (run.status, run.attempt) == (TrainingRun.Status.SUCCEEDED, 2), run.error
    assert TokenizerVersion.objects.count() == 1
    assert_clean_after_a_sweep(weed, bucket, corpora=1)
