"""The sweep removes what dead work left (count files of dead attempts, stale ``.part`` files)
and never what live work is using (``services.sweep``)."""

import os
import time
from pathlib import Path

import pytest
from django.conf import settings

from tokenizers_app.models import TrainingRun
from tokenizers_app.services.runs import start_training_run
from tokenizers_app.services.sweep import sweep_leftovers

pytestmark = pytest.mark.django_db

# the one sweep answers the same kinds of leftover whichever the store (MEDIA_ROOT here)
NOTHING = {"count parts": [], "corpus files": [], "part files": [], "unfinished uploads": [],
           "downloads without a record": [], "evaluation parts": []}


def make(relative: str, age_seconds: float) -> Path:
    path = Path(settings.MEDIA_ROOT) / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"{}")
    then = time.time() - age_seconds
    os.utime(path, (then, then))
    os.utime(path.parent, (then, then))
    return path


def test_dead_attempts_and_stale_part_files_go_live_work_stays(corpus):
    live = start_training_run(corpora=[corpus], tokenizer_name="live", vocab_size=300)
    TrainingRun.objects.filter(pk=live.pk).update(status="running", attempt=2)
    done = start_training_run(corpora=[corpus], tokenizer_name="done", vocab_size=300)
    TrainingRun.objects.filter(pk=done.pk).update(status="failed", attempt=1)
    hour = 3600
    make(f"runs/{live.pk}/attempt-1/part-0.json", hour)       # replaced by attempt 2
    kept = make(f"runs/{live.pk}/attempt-2/part-0.json", hour)  # the attempt counting now
    make(f"runs/{done.pk}/attempt-1/part-0.json", hour)       # the run failed
    make("runs/999999/attempt-1/part-0.json", hour)           # the run is gone
    make("corpora/incoming/tmpabc.part", hour)                # a killed upload
    fresh = make("corpora/incoming/tmpdef.part", 10)          # an upload under way

    removed = sweep_leftovers(min_age_seconds=60)

    assert sorted(removed["count parts"]) == sorted([
        f"runs/{live.pk}/attempt-1", f"runs/{done.pk}/attempt-1", "runs/999999/attempt-1"])
    assert removed["part files"] == ["corpora/incoming/tmpabc.part"]
    assert removed["corpus files"] == []  # the corpus's own file has its row
    assert kept.is_file() and fresh.is_file() and corpus.path.is_file()
    assert not (Path(settings.MEDIA_ROOT) / "runs" / str(done.pk)).exists()
    assert sweep_leftovers(min_age_seconds=60) == NOTHING


def test_a_corpus_file_without_its_row_goes_once_old_enough(corpus):
    orphan = make("corpora/" + "ab" * 32 + ".txt", 3600)
    young = make("corpora/" + "cd" * 32 + ".txt", 10)
    removed = sweep_leftovers(min_age_seconds=60)
    assert removed["corpus files"] == ["corpora/" + "ab" * 32 + ".txt"]
    assert not orphan.exists() and young.is_file() and corpus.path.is_file()


def test_the_render_cache_older_code_kept_beside_the_store_goes_once_old(corpus):
    """Older code cached rendered files under ``exports/DIGEST/FORMAT/NAME/`` beside the
    downloads; no record names them, so the one sweep removes them, as any object under
    ``exports/`` without its record."""
    make("exports/abc/hf/prose-bpe/tokenizer.json", 3600)
    make("exports/abc/hf/.staging-x.part/prose-bpe/tokenizer.json", 3600)
    removed = sweep_leftovers(min_age_seconds=60)
    assert removed["downloads without a record"] == [
        "exports/abc/hf/.staging-x.part/prose-bpe/tokenizer.json",
        "exports/abc/hf/prose-bpe/tokenizer.json"]
    assert sweep_leftovers(min_age_seconds=60) == NOTHING


def test_nothing_is_removed_before_it_is_old_enough(corpus):
    make("runs/999999/attempt-1/part-0.json", 10)
    make("exports/abc/hf/download/.tokenizer.json.x.part", 10)
    make("exports/abc/hf/download/t-tokenizer.json.gz", 10)  # its record is being written
    assert sweep_leftovers(min_age_seconds=60) == NOTHING


def test_a_render_killed_mid_write_leaves_objects_the_sweep_removes(corpus, client,
                                                                   monkeypatch):
    """A download is rendered into the store only (no folder beside it): killed after its gzip
    and half its file, it leaves an object no record names and a ``.part``, which the sweep
    removes once old, as it does in a bucket; the next request renders it whole."""
    from tests.registry.helpers import train
    from tokenizers_app.services import downloads
    from tokenizers_app.storage.local import LocalStore

    version = train(corpus, "t", vocab_size=300).versions.get()
    downloads._DOWNLOADS.clear()
    write = LocalStore.write_bytes

    def killed(self, name, data):  # the gzip stored, the file half written, then death
        if name.endswith(".gz"):
            return write(self, name, data)
        self.writer(name).write(data[:10])  # neither committed nor aborted: a .part stays
        raise SystemExit("killed")

    with monkeypatch.context() as dying:
        dying.setattr(LocalStore, "write_bytes", killed)
        with pytest.raises(SystemExit):
            downloads.render_download(version=version, format="hf")
    folder = Path(settings.MEDIA_ROOT) / "exports" / version.digest / "hf" / "download"
    left = sorted(p.name for p in folder.iterdir())
    assert len(left) == 2 and left[1] == "t-tokenizer.json.gz" and left[0].endswith(".part")
    assert sweep_leftovers(min_age_seconds=60) == NOTHING  # a render may be under way
    then = time.time() - 3600
    for path in folder.iterdir():
        os.utime(path, (then, then))

    removed = sweep_leftovers(min_age_seconds=60)

    download = f"exports/{version.digest}/hf/download"
    assert removed["part files"] == [f"{download}/{left[0]}"]
    assert removed["downloads without a record"] == [f"{download}/t-tokenizer.json.gz"]
    answer = client.get("/api/tokenizers/t/versions/1/download?format=hf")  # renders again
    assert answer.status_code == 200
    assert sorted(p.name for p in folder.iterdir()) == [
        "t-tokenizer.json", "t-tokenizer.json.gz", "t.sha256"]
    assert sweep_leftovers(min_age_seconds=0) == NOTHING


def test_the_part_totals_of_a_finished_evaluation_go_those_of_a_running_one_stay(corpus):
    """A merge removes its parts' files; a merge killed (or an evaluation that failed after a
    part) leaves them to the sweep, once the evaluation is no longer queued or running."""
    from tests.registry.helpers import import_text, sample_text, train
    from tokenizers_app.models import Evaluation

    version = train(corpus).versions.get()
    held_out = import_text(sample_text(3_000, offset=50_000), "held-out")
    running = Evaluation.objects.create(version=version, corpus=held_out, status="running")
    other = import_text(sample_text(3_000, offset=90_000), "other")
    failed = Evaluation.objects.create(version=version, corpus=other, status="failed")
    make(f"evaluations/{running.pk}/attempt-1/part-0.json", 3600)
    make(f"evaluations/{failed.pk}/attempt-1/part-0.json", 3600)
    make("evaluations/999999/attempt-2/part-3.json", 3600)
    removed = sweep_leftovers(min_age_seconds=60)
    assert removed["evaluation parts"] == [f"evaluations/{failed.pk}", "evaluations/999999"]
    assert (Path(settings.MEDIA_ROOT) / f"evaluations/{running.pk}/attempt-1/part-0.json"
            ).is_file()
