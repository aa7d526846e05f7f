"""Loaded into the test workers (``celery worker --include``) to put them where a test needs them.

- With ``TEST_BARRIER_DIR`` set, each worker's first count task waits until
  ``TEST_BARRIER_WORKERS`` workers have each started one. A fan-out test means to see its parts
  counted by several workers; without this, a fast worker may count every part before the other
  one looks at the queue (each worker holds one task at a time, so while the first waits here the
  next part goes to another worker). The wait ends after 60 s in any case, and the test's own
  assertions then tell what happened.
- With ``TEST_HOLD_MERGE`` set, a training run stops in its merge stage once it has reported
  merges done, and stays there (its heartbeat going on) until the worker is killed: a test can
  then kill the worker mid-training however fast the merge loop is on this machine.
"""

import os
import time
from pathlib import Path

from celery.signals import task_prerun

COUNT_TASK = "tokenizers_app.tasks.count_corpus_part"
TRAIN_TASK = "tokenizers_app.tasks.execute_training_run"


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


@task_prerun.connect
def hold_in_the_merge_stage(task=None, **_):
    if not os.environ.get("TEST_HOLD_MERGE") or task is None or task.name != TRAIN_TASK:
        return
    from tokenizers_app.services.attempts import RunReporter

    report = RunReporter.progress
    if getattr(report, "holds", False):
        return

    def progress_then_hold(self, stage, done, total):
        report(self, stage, done, total)
        if stage != "merge" or done == 0:
            return
        while True:  # until killed; the row shows these merges done, with a fresh heartbeat
            self.last_write = float("-inf")
            report(self, stage, done, total)
            time.sleep(0.2)

    progress_then_hold.holds = True
    RunReporter.progress = progress_then_hold
