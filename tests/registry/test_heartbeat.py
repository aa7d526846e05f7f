"""A running attempt beats from a thread of its own, so one long step that reports no progress
does not look like a dead worker: the reaper leaves a run whose worker is alive."""

import time
from unittest import mock

import pytest

from tests.registry.helpers import import_text, sample_text
from tokenizers_app.engines.registry import ByteBPE
from tokenizers_app.models import TrainingRun
from tokenizers_app.services import runs
from tokenizers_app.services.runs import execute_training_run, reap_runs, start_training_run


def run_here_with(step) -> TrainingRun:
    """Start a run and execute it in this process (no worker takes it) with ``step`` in place
    of training; returns the run as it was started."""
    with mock.patch("celery.app.task.Task.apply_async"):
        corpus = import_text(sample_text(5_000), "prose")
        run = start_training_run(corpora=[corpus], tokenizer_name="t", vocab_size=300)
        with mock.patch.object(ByteBPE, "train", step):  # the run's kind trains it
            execute_training_run(run_id=run.pk)
    return run


@pytest.mark.django_db(transaction=True)
def test_a_long_silent_step_keeps_beating_and_the_reaper_leaves_the_run_alone(settings):
    settings.RUN_HEARTBEAT_SECONDS = 0.2
    seen = {}

    def one_long_step(*args, **kwargs):  # trains without a single progress report
        run = TrainingRun.objects.get()
        seen["first"] = run.heartbeat_at
        time.sleep(2.5)
        seen["reaped"] = reap_runs(stale_seconds=1)
        seen["last"] = TrainingRun.objects.get().heartbeat_at
        raise ValueError("the step ended here")

    run = run_here_with(one_long_step)

    assert (seen["last"] - seen["first"]).total_seconds() >= 2
    assert seen["reaped"]["requeued"] == [] and seen["reaped"]["failed"] == []
    run.refresh_from_db()
    assert (run.status, run.attempt, run.error) == (TrainingRun.Status.FAILED, 1,
                                                     "the step ended here")
    time.sleep(0.5)
    assert TrainingRun.objects.get().heartbeat_at == run.heartbeat_at  # it stopped with the run


@pytest.mark.django_db(transaction=True)
def test_without_its_heartbeat_thread_the_same_step_would_be_taken_over(settings):
    """The control: with beats too rare to help, the reaper does take the run."""
    settings.RUN_HEARTBEAT_SECONDS = 3600
    seen = {}

    def one_long_step(*args, **kwargs):
        time.sleep(1.5)
        seen["reaped"] = reap_runs(stale_seconds=1)
        raise ValueError("the step ended here")

    run = run_here_with(one_long_step)
    assert seen["reaped"]["requeued"] == [run.pk]


@pytest.mark.django_db(transaction=True)
def test_a_cancel_asked_during_one_long_step_wins_when_the_step_ends(settings):
    """A custom pattern's match notices no cancel until it ends (at most MATCH_SECONDS); then
    the run ends cancelled, not failed by whatever stopped the step."""
    def one_long_step(*args, **kwargs):
        runs.cancel_training_run(run=TrainingRun.objects.get())
        raise ValueError("matching the pattern took longer than 60 s")

    run = run_here_with(one_long_step)
    run.refresh_from_db()
    assert (run.status, run.error) == (TrainingRun.Status.CANCELLED, "")
    assert not run.versions.exists()
