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
    assert sweep_leftovers(min_age_seconds=60) == {"count parts": [], "corpus files": [],
                                                   "part files": [], "evaluation parts": []}


def test_a_corpus_file_without_its_row_goes_once_old_enough(corpus):
    orphan = make("corpora/" + "ab" * 32 + ".txt", 3600)
    young = make("corpora/" + "cd" * 32 + ".txt", 10)
    removed = sweep_leftovers(min_age_seconds=60)
    assert removed["corpus files"] == ["corpora/" + "ab" * 32 + ".txt"]
    assert not orphan.exists() and young.is_file() and corpus.path.is_file()


def test_nothing_is_removed_before_it_is_old_enough(corpus):
    make("runs/999999/attempt-1/part-0.json", 10)
    make("exports/abc/hf/download/.tokenizer.json.x.part", 10)
    assert sweep_leftovers(min_age_seconds=60) == {"count parts": [], "corpus files": [],
                                                   "part files": [], "evaluation parts": []}


def test_a_render_killed_mid_write_leaves_a_staging_folder_the_sweep_removes(corpus,
                                                                            monkeypatch):
    from tests.registry.helpers import train
    from tokenizers_app.services import downloads

    version = train(corpus, "t", vocab_size=300).versions.get()
    staged = []

    def killed(folder, files):  # a first file half written, then the process dies
        (folder / ".tokenizer.json.x.part").write_bytes(b'{"half')
        staged.append(folder)
        raise SystemExit("killed")

    with monkeypatch.context() as dying:
        dying.setattr(downloads, "write_files", killed)
        dying.setattr(downloads.shutil, "rmtree", lambda *args, **kwargs: None)  # no clean-up
        with pytest.raises(SystemExit):
            downloads.render_tokenizer_files(version=version, format="hf")
    [folder] = staged
    exports = Path(settings.MEDIA_ROOT) / "exports"
    assert folder.parent == exports / version.digest / "hf" and folder.name.endswith(".part")
    assert sweep_leftovers(min_age_seconds=60)["part files"] == []  # a render may be under way
    then = time.time() - 3600
    os.utime(folder, (then, then))

    removed = sweep_leftovers(min_age_seconds=60)

    assert removed["part files"] == [str(folder.relative_to(settings.MEDIA_ROOT))]
    assert not folder.exists()
    assert downloads.render_tokenizer_files(version=version, format="hf")  # renders again
    assert [p.name for p in (exports / version.digest / "hf").iterdir()] == ["t"]


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
