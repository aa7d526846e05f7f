"""A running evaluation's progress and its cancel: the corpus's blocks pass through
``reported(blocks, running)``, which adds the bytes read to the evaluation's ``bytes_done``
about once a second, in the one UPDATE that also finds whether this attempt still holds the
evaluation. When it does not (cancelled, or queued again by the reaper), the evaluation stops
there, with ``Stopped``: a cancel is honoured within about a second of reading (a library
kind's batch of about 1 MB is the longest step between two reports)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator

from django.db import models

REPORT_SECONDS = 1.0


class Stopped(Exception):
    """This attempt no longer holds its evaluation: it was cancelled, or queued again."""


def reported(blocks: Iterable[str], running: Callable[[], models.QuerySet],
             every: float | None = None) -> Iterator[str]:
    """The blocks, with their bytes added to ``bytes_done`` of the evaluation that
    ``running()`` selects while this attempt holds it (every ``every`` seconds, ``REPORT_SECONDS`` unless said, and at the end);
    ``Stopped`` when it selects nothing. The bytes of a range read whole add up to its size."""
    every = REPORT_SECONDS if every is None else every
    pending, due = 0, time.monotonic() + every
    for block in blocks:
        yield block
        pending += len(block) if block.isascii() else len(block.encode())
        if time.monotonic() >= due:
            _report(running, pending)
            pending, due = 0, time.monotonic() + every
    _report(running, pending)


def _report(running: Callable[[], models.QuerySet], read: int) -> None:
    if not running().update(bytes_done=models.F("bytes_done") + read):
        raise Stopped("this evaluation was cancelled or queued again")
