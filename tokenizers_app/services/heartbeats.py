"""A heartbeat written from a thread of its own while a run's attempt or an evaluation is at
work: what the reaper reads to tell a dead worker from a slow one."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from django.conf import settings
from django.db import DatabaseError, connection, models
from django.utils import timezone

log = logging.getLogger(__name__)


class Heartbeat(threading.Thread):
    """Writes a heartbeat every ``RUN_HEARTBEAT_SECONDS`` from a thread of its own, whatever the
    work is doing (one long step reports no progress): so a heartbeat older than
    ``RUN_STALE_SECONDS`` (``EVALUATION_STALE_SECONDS``) means the worker process is gone, and the
    reaper never takes a run (an evaluation) from a worker that is still alive. ``owned`` gives
    the row while this attempt holds it (a row taken over gets no more beats)."""

    def __init__(self, label: str, owned: Callable[[], models.QuerySet]):
        super().__init__(daemon=True, name=f"heartbeat {label}")
        self.label, self.owned, self.stopped = label, owned, threading.Event()

    def start_unless_in_transaction(self) -> None:
        # another connection cannot see the rows of an open transaction (work called inside
        # one, as tests do, beats through its progress reports only)
        if not connection.in_atomic_block:
            self.start()

    def run(self) -> None:
        try:
            while not self.stopped.wait(settings.RUN_HEARTBEAT_SECONDS):
                try:
                    self.owned().update(heartbeat_at=timezone.now())
                except DatabaseError as error:  # the next beat tries again, connected anew
                    log.warning("%s: heartbeat not written (%s)", self.label, error)
                    connection.close()
        finally:
            connection.close()  # this thread's own connection

    def stop(self) -> None:
        self.stopped.set()
        if self.is_alive():
            self.join(timeout=10)
