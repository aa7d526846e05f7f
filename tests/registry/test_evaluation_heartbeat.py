"""Evaluations beat as runs do: while an evaluation is computed, a thread of its own writes its
``heartbeat_at`` every ``RUN_HEARTBEAT_SECONDS``. The reaper queues again a running evaluation
whose heartbeat is older than ``EVALUATION_STALE_SECONDS`` (120 s, as ``RUN_STALE_SECONDS``): a
killed one is back in the queue within minutes, and a long one whose worker lives is never
taken from it, however long it has been running."""

import os
import signal
import subprocess
import time
from pathlib import Path
from unittest import mock

import pytest
from django.conf import settings as project_settings

from tests.registry.helpers import import_text, sample_text, train, wait_for_run, wait_until
from tokenizers_app.models import Evaluation, TrainingRun
from tokenizers_app.services import evaluations
from tokenizers_app.services.evaluations import reap_evaluations, run_evaluation
from tokenizers_app.services.runs import start_training_run

from .test_faults import own_workers, wait_for  # noqa: F401 - own_workers is a fixture

Status = Evaluation.Status


def test_by_default_a_silent_evaluation_is_taken_back_within_minutes():
    """120 s without a beat, and the reaper looks every minute (beat): back in the queue within
    three minutes of its worker's death, as a run is (it was 30 minutes)."""
    assert project_settings.EVALUATION_STALE_SECONDS == project_settings.RUN_STALE_SECONDS == 120
    assert project_settings.RUN_HEARTBEAT_SECONDS * 3 <= project_settings.EVALUATION_STALE_SECONDS
    reaper = project_settings.CELERY_BEAT_SCHEDULE["reap-stale-runs"]
    assert (reaper["task"], reaper["schedule"]) == ("tokenizers_app.tasks.reap_runs", 60.0)


def evaluate_here_with(step) -> Evaluation:
    """Train a version (its evaluation is queued; no worker takes it) and compute the evaluation
    in this process with ``step`` in place of its pass over the corpus
    (``totals_and_words``); returns the evaluation as stored."""
    with mock.patch("celery.app.task.Task.apply_async"):
        import_text(sample_text(5_000, offset=100_000), "held-out", is_evaluation=True)
        train(import_text(sample_text(5_000), "prose"))
        evaluation = Evaluation.objects.get()
        with mock.patch.object(evaluations, "totals_and_words", step):
            run_evaluation(evaluation_id=evaluation.pk)
    return Evaluation.objects.get()


@pytest.mark.django_db(transaction=True)
def test_a_long_silent_evaluation_keeps_beating_and_the_reaper_leaves_it_alone(settings):
    settings.RUN_HEARTBEAT_SECONDS = 0.2
    seen = {}
    evaluate = evaluations.totals_and_words

    def one_long_step(tokenizer, lines):  # no progress of any kind for 2.5 s
        seen["first"] = Evaluation.objects.get().heartbeat_at
        time.sleep(2.5)
        seen["reaped"] = reap_evaluations(stale_seconds=1)
        seen["last"] = Evaluation.objects.get().heartbeat_at
        return evaluate(tokenizer, lines)

    evaluation = evaluate_here_with(one_long_step)

    assert seen["reaped"] == []
    assert (seen["last"] - seen["first"]).total_seconds() >= 2
    assert evaluation.status == Status.SUCCEEDED, evaluation.error
    time.sleep(0.5)
    assert Evaluation.objects.get().heartbeat_at == evaluation.heartbeat_at  # it stopped with it


@pytest.mark.django_db(transaction=True)
def test_without_its_heartbeat_thread_the_same_evaluation_would_be_taken_back(settings):
    """The control: with beats too rare to help, the reaper takes it, and the late result of
    the attempt it was taken from is not written."""
    settings.RUN_HEARTBEAT_SECONDS = 3600
    seen = {}
    evaluate = evaluations.totals_and_words

    def one_long_step(tokenizer, lines):
        time.sleep(1.5)
        seen["reaped"] = reap_evaluations(stale_seconds=1)
        return evaluate(tokenizer, lines)

    evaluation = evaluate_here_with(one_long_step)
    assert seen["reaped"] == [evaluation.pk]
    assert evaluation.status == Status.QUEUED and not evaluation.metrics


def test_a_killed_evaluation_is_queued_again_and_a_living_long_one_is_not(own_workers):
    """On real workers: an evaluation held (``TEST_HOLD_STAGE=evaluate``) far longer than the
    staleness the reaper is given here (3 s) is left alone while its worker lives; once the
    worker is killed (SIGKILL), its heartbeat stops and the reaper queues the evaluation again;
    a new worker computes it: one evaluation, succeeded."""
    import_text(sample_text(20_000, offset=100_000), "held-out", is_evaluation=True)
    corpus = import_text(sample_text(20_000), "prose")
    worker = own_workers("evaluating-held", TEST_HOLD_STAGE="evaluate", RUN_HEARTBEAT_SECONDS="1")
    run = start_training_run(corpora=[corpus], tokenizer_name="evaluated", vocab_size=300)
    run = wait_for_run(run, worker=worker)
    assert run.status == TrainingRun.Status.SUCCEEDED, run.error
    evaluation = Evaluation.objects.get()
    wait_for(lambda: Evaluation.objects.filter(pk=evaluation.pk, status=Status.RUNNING).exists(),
             60, "the evaluation to run", worker)

    stale_seconds = 3
    started = Evaluation.objects.get().started_at
    for _ in range(3 * stale_seconds * 2):  # alive and held for three times the staleness
        assert reap_evaluations(stale_seconds=stale_seconds) == []
        time.sleep(0.5)
    evaluation.refresh_from_db()
    assert evaluation.status == Status.RUNNING and evaluation.started_at == started
    assert (evaluation.heartbeat_at - started).total_seconds() > stale_seconds  # it beats

    worker.kill()
    wait_until(lambda: reap_evaluations(stale_seconds=stale_seconds) == [evaluation.pk], 30,
               "the reaper to queue the killed worker's evaluation again")
    assert Evaluation.objects.get().status == Status.QUEUED

    replacement = own_workers("evaluating-again")
    wait_for(lambda: Evaluation.objects.filter(pk=evaluation.pk).exclude(
        status__in=[Status.QUEUED, Status.RUNNING]).exists(), 60,
        "the evaluation to finish", replacement)
    evaluation = Evaluation.objects.get()  # one evaluation of the version on the corpus
    assert evaluation.status == Status.SUCCEEDED, evaluation.error
    assert evaluation.compression_ratio > 1 and evaluation.started_at > started


def test_a_prefork_child_killed_mid_evaluation_is_taken_back_and_the_same_worker_computes_it(
        own_workers, tmp_path):
    """The drill as it happened: the worker's main process lives (as ``manage.py start`` and
    compose run it, prefork), the child computing an evaluation is killed (SIGKILL). The
    evaluation stays running, its heartbeat stopped with the child; the reaper queues it again
    and the same worker, with a new child, computes it: one evaluation, succeeded."""
    import_text(sample_text(20_000, offset=100_000), "held-out", is_evaluation=True)
    corpus = import_text(sample_text(20_000), "prose")
    release = tmp_path / "release"
    worker = own_workers("evaluating-prefork", TEST_WORKER_POOL="prefork",
                         TEST_HOLD_STAGE="evaluate", TEST_HOLD_RELEASE=str(release),
                         RUN_HEARTBEAT_SECONDS="1")
    run = wait_for_run(start_training_run(corpora=[corpus], tokenizer_name="evaluated",
                                          vocab_size=300), worker=worker)
    assert run.status == TrainingRun.Status.SUCCEEDED, run.error
    evaluation = Evaluation.objects.get()
    wait_for(lambda: Evaluation.objects.filter(pk=evaluation.pk, status=Status.RUNNING).exists(),
             60, "the evaluation to run", worker)
    started = Evaluation.objects.get().started_at

    held = Path(f"{release}.pid")
    wait_until(held.exists, 30, "the child computing the evaluation to say its pid")
    child = int(held.read_text())
    children = subprocess.run(["pgrep", "-P", str(worker.process.pid)], capture_output=True,
                              text=True).stdout.split()
    assert str(child) in children, worker.log()  # a child of the worker's main process
    os.kill(child, signal.SIGKILL)
    release.touch()  # the new child holds nothing
    wait_until(lambda: reap_evaluations(stale_seconds=3) == [evaluation.pk], 30,
               "the reaper to queue the killed child's evaluation again")

    wait_for(lambda: Evaluation.objects.filter(pk=evaluation.pk).exclude(
        status__in=[Status.QUEUED, Status.RUNNING]).exists(), 60,
        "the same worker to compute the evaluation", worker)
    assert worker.process.poll() is None  # the main process lived throughout
    evaluation = Evaluation.objects.get()
    assert evaluation.status == Status.SUCCEEDED, evaluation.error
    assert evaluation.compression_ratio > 1 and evaluation.started_at > started
