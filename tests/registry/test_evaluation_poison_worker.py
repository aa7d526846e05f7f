"""The poison case on a real Celery worker: a library that aborts while evaluating dies in its own
child process; the evaluation fails in words and the worker process lives."""

import os
import time
from unittest import mock

import pytest

from tests.hostile_files import multiplying_replace
from tests.registry.helpers import import_text
from tests.registry.services.test_evaluation_poison import planted
from tokenizers_app.models import Evaluation


@pytest.mark.slow
def test_a_celery_worker_evaluating_the_poison_version_lives_and_the_evaluation_fails_in_words(
        session_worker, start_worker, transactional_db):
    session_worker["worker"].stop()  # only this worker, with its own memory limit, takes the task
    worker = start_worker("poison", ENGINE_WORKER_MEMORY_BYTES=str(512 * 1024**2))
    try:
        _poison_evaluated_by(worker)
    finally:
        worker.stop()  # the ``worker`` fixture starts the shared one again when asked


def _poison_evaluated_by(worker) -> None:
    pid = worker.process.pid
    import_text("a banana and a llama\n" * 200, "aaa", is_evaluation=True)
    with mock.patch("celery.app.task.Task.apply_async"):
        version = planted("grows", multiplying_replace())
    from tokenizers_app import tasks

    evaluation = Evaluation.objects.get(version=version)
    tasks.run_evaluation.delay(evaluation.pk)
    deadline = time.monotonic() + 120
    while Evaluation.objects.get(pk=evaluation.pk).status in ("queued", "running"):
        assert time.monotonic() < deadline, worker.log()
        time.sleep(0.3)
    evaluation.refresh_from_db()
    assert evaluation.status == "failed", worker.log()
    assert "needed more than the 512 MB of memory it may use" in evaluation.error
    assert worker.process.poll() is None and worker.process.pid == pid  # the worker lives
    os.kill(pid, 0)
