"""Loaded into the test workers (``celery worker --include``): with ``TEST_BARRIER_DIR`` set, each
worker's first count task waits until ``TEST_BARRIER_WORKERS`` workers have each started one.

A fan-out test means to see its parts counted by several workers; without this, a fast worker
may count every part before the other one looks at the queue (each worker holds one task at a
time, so while the first waits here the next part goes to another worker). The wait ends after
60 s in any case, and the test's own assertions then tell what happened.
"""

import os
import time
from pathlib import Path

from celery.signals import task_prerun

COUNT_TASK = "tokenizers_app.tasks.count_corpus_part"


@task_prerun.connect
def wait_for_the_other_workers(task=None, **_):
    folder = os.environ.get("TEST_BARRIER_DIR")
    if not folder or task is None or task.name != COUNT_TASK:
        return
    mine = Path(folder) / (task.request.hostname or str(os.getpid()))
    if mine.exists():
        return
    mine.touch()
    needed = int(os.environ.get("TEST_BARRIER_WORKERS", "2"))
    deadline = time.monotonic() + 60
    while len(list(Path(folder).iterdir())) < needed and time.monotonic() < deadline:
        time.sleep(0.05)
