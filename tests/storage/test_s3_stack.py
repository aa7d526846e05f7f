"""Web and two workers on three separate disks (three MEDIA_ROOTs), sharing nothing but the
database, the broker and the bucket (a real SeaweedFS): upload through the API, a run large
enough to fan out over both workers, its evaluation, and the download."""

from pathlib import Path

import pytest

from tests.registry.helpers import made_up_words, sample_text, wait_until
from tokenizers_app.bpe import train_bpe
from tokenizers_app.bpe.formats.archive import download_file
from tokenizers_app.models import ApiKey, CountPart, Evaluation, TrainingRun
from tokenizers_app.services.downloads import render_tokenizer_files

from .conftest import point_settings_at
from .processes import Web

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

FANOUT = {"FANOUT_MIN_BYTES": "200000", "FANOUT_PART_BYTES": "60000"}


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


@pytest.fixture
def stack(weed, own_workers, registry_environment, tmp_path, settings, django_user_model):
    """A web process and two workers, each with a MEDIA_ROOT of its own, on one bucket."""
    from tests.conftest import database_env

    bucket = weed.new_bucket()
    point_settings_at(settings, weed, bucket)
    settings.MEDIA_ROOT = str(tmp_path / "test-media")
    roots = {name: tmp_path / name for name in ("web", "worker-a", "worker-b")}
    barrier = tmp_path / "barrier"  # each worker's first count task waits for the other's
    barrier.mkdir()
    env = {**registry_environment, **database_env(), **weed.env(bucket), **FANOUT,
           "TEST_BARRIER_DIR": str(barrier), "TEST_BARRIER_WORKERS": "2"}
    workers = [own_workers(name, **{**env, "MEDIA_ROOT": str(roots[name])})
               for name in ("worker-a", "worker-b")]
    web = Web({**env, "MEDIA_ROOT": str(roots["web"])}, tmp_path / "web.log").start()
    member = django_user_model.objects.create_user("member")
    yield {"web": web, "workers": workers, "roots": roots, "bucket": bucket,
           "key": ApiKey.objects.create_key(member, "ci")[1]}
    web.stop()


def test_upload_fan_out_training_evaluation_and_download_share_only_the_bucket(stack, weed):
    web, key = stack["web"], stack["key"]
    text = sample_text(300_000) + made_up_words(300_000, seed=3)
    status, corpus = web.upload(key, "prose", text.encode())
    assert status == 201, corpus
    status, held_out = web.upload(key, "held-out", sample_text(20_000, offset=7).encode(),
                                  evaluation=True)
    assert status == 201, held_out

    status, run = web.call_json("POST", "/api/runs", {"tokenizer": "prose-bpe",
                                                      "corpora": ["prose"], "vocab_size": 700},
                                Authorization=f"Bearer {key}")
    assert status == 201, run
    logs = "\n".join(w.log() for w in stack["workers"])
    record = TrainingRun.objects.get(pk=run["id"])

    def finished():
        record.refresh_from_db()
        return record.is_finished

    wait_until(finished, 240, f"run {record.pk} to finish\n{logs}", interval=0.5)
    assert record.status == TrainingRun.Status.SUCCEEDED, f"{record.error}\n{logs}"
    parts = CountPart.objects.filter(run=record)
    assert record.fanout_parts == parts.count() >= 8
    counted_by = {p.worker.split("-registry-test", 1)[0] for p in parts}
    assert counted_by == {"worker-a", "worker-b"}, counted_by  # both took parts
    version = record.versions.get()
    assert version.load_tokenizer().merges == train_bpe([text], 700).merges

    evaluation = Evaluation.objects.get(version=version, corpus__name="held-out")
    wait_until(lambda: Evaluation.objects.get(pk=evaluation.pk).status in ("succeeded",
                                                                          "failed"),
               120, "the evaluation to finish", interval=0.5)
    evaluation.refresh_from_db()
    assert (evaluation.status, evaluation.error) == ("succeeded", "")
    assert evaluation.compression_ratio > 1

    status, headers, body = web.call("GET", "/api/tokenizers/prose-bpe/versions/1/download"
                                            "?format=hf")
    assert status == 200
    expected = download_file(render_tokenizer_files(version=version, format="hf"),
                             "prose-bpe", "hf")[1]
    assert body == expected
    again, _, _ = web.call("GET", "/api/tokenizers/prose-bpe/versions/1/download?format=hf",
                           **{"If-None-Match": headers["ETag"]})
    assert again == 304

    # nothing of the registry's files on any machine's disk (the workers' corpus cache aside)
    roots = stack["roots"]
    assert files_under(roots["web"]) == []
    for name in ("worker-a", "worker-b"):
        assert [f for f in files_under(roots[name]) if not f.startswith("cache/")] == []
    stored = weed.objects(stack["bucket"])
    assert f"registry/corpora/{corpus['sha256']}.txt" in stored
    assert not [k for k in stored if "/runs/" in k or k.endswith(".part")]
