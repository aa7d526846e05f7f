"""Sending a task once the transaction that made its rows commits. When the broker does not
answer, nothing is raised where the task is sent: the rows stay queued, one warning line with
the broker's reason is logged (the reason names the broker's host, so only the log has it),
``on_failure`` is told (so that a command, a page or the API can say so), and the reaper
sends the task again later (runs after ``RUN_STALE_SECONDS``, evaluations after
``EVALUATION_RESEND_SECONDS``); a second delivery of a task does nothing.

A task is sent by its name: the services never import ``tasks.py``, whose bodies import the
services (an import-linter contract in pyproject.toml keeps it so, and the architecture test
finds no circle of imports). The name is looked up among the tasks the Celery app registers, and
the task object sends itself, so the task's own options (and whatever a test puts in the place
of ``Task.apply_async``) apply as they did when services held the task object."""

from __future__ import annotations

import logging

from celery import current_app
from django.db import transaction
from kombu.exceptions import OperationalError

from ..errors import Unavailable

log = logging.getLogger(__name__)

BROKER_ERRORS = (OperationalError, OSError)
# a blip is retried for about a second; a broker that stays down is the reaper's to retry
RETRY_POLICY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.5, "interval_max": 1}


class QueueUnavailable(Unavailable):
    """The rows are saved, but their task could not be sent: the broker does not answer (503).
    ``record`` is what was saved (a run, say); the message says what happens next."""

    def __init__(self, record, message: str):
        super().__init__(message)
        self.record = record


# the tasks' names, as tokenizers_app/tasks.py registers them (tests/test_architecture.py checks)
TRAIN = "tokenizers_app.tasks.execute_training_run"
COUNT_PART = "tokenizers_app.tasks.count_corpus_part"
MERGE_COUNTS = "tokenizers_app.tasks.merge_counted_run"
EVALUATE = "tokenizers_app.tasks.run_evaluation"
EVALUATE_PART = "tokenizers_app.tasks.evaluate_corpus_part"
MERGE_EVALUATION = "tokenizers_app.tasks.merge_evaluation_parts"


def registered_task(name: str):
    """The task the Celery app registers under ``name``. A worker registers its tasks when it
    starts; a web process or a command finds them on its first send (the app's autodiscovery,
    the worker's own way of finding ``tasks.py``). An unknown name is a ``KeyError``."""
    tasks = current_app.tasks
    if name not in tasks:
        current_app.autodiscover_tasks(force=True)
    return tasks[name]


def send_on_commit(name: str, *args, on_failure=None) -> None:
    """Send the task named ``name`` with ``args`` after the current transaction commits (at
    once outside one)."""
    task = registered_task(name)  # a wrong name fails here, where it is written

    def send() -> None:
        try:
            task.apply_async(args, retry=True, retry_policy=RETRY_POLICY)
        except BROKER_ERRORS as exc:  # its words name the broker's host: the log's alone
            log.warning("%s%r not sent: the task queue does not answer (%s); it stays "
                        "queued and the reaper sends it again", name, args, exc)
            if on_failure is not None:  # the caller tells the user, in words of its own
                on_failure(exc)

    transaction.on_commit(send)
