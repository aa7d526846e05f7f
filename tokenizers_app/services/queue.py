"""Sending a task once the transaction that made its rows commits. When the broker does not
answer, nothing is raised where the task is sent: the rows stay queued, one warning line with
the broker's reason is logged (the reason names the broker's host, so only the log has it),
``on_failure`` is told (so that a command, a page or the API can say so), and the reaper
sends the task again later (runs after ``RUN_STALE_SECONDS``, evaluations after
``EVALUATION_RESEND_SECONDS``); a second delivery of a task does nothing."""

from __future__ import annotations

import logging

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


def send_on_commit(task, *args, on_failure=None) -> None:
    """Send ``task(*args)`` after the current transaction commits (at once outside one)."""

    def send() -> None:
        try:
            task.apply_async(args, retry=True, retry_policy=RETRY_POLICY)
        except BROKER_ERRORS as exc:  # its words name the broker's host: the log's alone
            log.warning("%s%r not sent: the task queue does not answer (%s); it stays "
                        "queued and the reaper sends it again", task.name, args, exc)
            if on_failure is not None:  # the caller tells the user, in words of its own
                on_failure(exc)

    transaction.on_commit(send)
