"""Loaded into the test workers (``celery worker --include``) to put them where a test needs them.

- With ``TEST_BARRIER_DIR`` set, each worker's first count task waits until
  ``TEST_BARRIER_WORKERS`` workers have each started one. A fan-out test means to see its parts
  counted by several workers; without this, a fast worker may count every part before the other
  one looks at the queue (each worker holds one task at a time, so while the first waits here the
  next part goes to another worker). The wait ends after 60 s in any case, and the test's own
  assertions then tell what happened.
- With ``TEST_HOLD_STAGE`` set to a stage (``count``, ``merge``), a task stops in that stage
  once it has some of it done, and stays there (reporting that progress, its heartbeat going on)
  until the worker is killed: a test can kill a worker mid-stage however fast this machine is,
  and the run's next attempt, on a worker without it, need not be long. Should a progress
  write fail while held (the database restarted), the task ends as it would, and the worker
  holds nothing more. With ``TEST_HOLD_AFTER=N``, the first N tasks (count parts, say) to
  reach the stage go through. ``TEST_HOLD_STAGE=evaluate`` holds an evaluation once it is
  running, before it computes its metrics.
- With ``TEST_HOLD_RELEASE`` set to a file, the held task goes on once that file exists (a test
  restarts the broker meanwhile, say, and then lets the task finish). A process holding an
  evaluation writes its pid beside it, in ``<file>.pid`` (a test kills that pool child).
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


def released() -> bool:
    release = os.environ.get("TEST_HOLD_RELEASE")
    return bool(release) and Path(release).exists()


@task_prerun.connect
def hold_in_a_stage(**_):
    stage_held = os.environ.get("TEST_HOLD_STAGE")
    if not stage_held:
        return
    if stage_held == "evaluate":
        return hold_evaluations()
    from tokenizers_app.bpe.training import Ticker

    tick = Ticker.__call__
    if getattr(tick, "holds", False):
        return
    let_through = int(os.environ.get("TEST_HOLD_AFTER", "0"))
    through, held = [], []  # the tickers let through the stage; the one held (once a process)

    def tick_then_hold(self, stage, done, total, force=False):
        tick(self, stage, done, total, force)
        if stage != stage_held or done == 0 or held or any(self is t for t in through):
            return
        if len(through) < let_through:
            through.append(self)
            return
        held.append(self)
        while not released():  # until killed (or a write fails: the task ends as it would)
            tick(self, stage, done, total, force=True)  # the row shows this, a fresh heartbeat
            time.sleep(0.2)

    tick_then_hold.holds = True
    Ticker.__call__ = tick_then_hold


def hold_evaluations():
    """Hold the first evaluation this process runs, once it is running, until the process is
    killed or the hold released."""
    from tokenizers_app.services import evaluations

    evaluate = evaluations.totals_and_words  # the one pass of an evaluation in one task
    if getattr(evaluate, "holds", False):
        return
    held = []

    def hold_then_evaluate(*args, **kwargs):
        if not held:
            held.append(True)
            if os.environ.get("TEST_HOLD_RELEASE"):
                Path(os.environ["TEST_HOLD_RELEASE"] + ".pid").write_text(str(os.getpid()))
            while not released():
                time.sleep(0.2)
        return evaluate(*args, **kwargs)

    hold_then_evaluate.holds = True
    evaluations.totals_and_words = hold_then_evaluate


@task_prerun.connect
def hold_in_an_evaluation_part(task=None, **_):
    """With ``TEST_HOLD_EVALUATION_PART`` set to a file's path, the evaluation part tasks after
    the first ``TEST_HOLD_AFTER`` stop after reading their first block of text (mid-part),
    touch that file, and stay there until the worker is killed."""
    marker = os.environ.get("TEST_HOLD_EVALUATION_PART")
    if not marker or task is None or task.name != "tokenizers_app.tasks.evaluate_corpus_part":
        return
    from tokenizers_app.services import evaluation_fanout

    if getattr(evaluation_fanout.part_blocks, "holds", False):
        return
    blocks, through = evaluation_fanout.part_blocks, []
    let_through = int(os.environ.get("TEST_HOLD_AFTER", "0"))

    def part_blocks_then_hold(source, start, end, *args, **kwargs):
        held = len(through) >= 2 * let_through  # (each part reads its range twice)
        through.append(start)
        for number, block in enumerate(blocks(source, start, end, *args, **kwargs)):
            yield block
            if held and number == 0:
                Path(marker).touch()
                while True:  # until killed
                    time.sleep(0.2)

    part_blocks_then_hold.holds = True
    evaluation_fanout.part_blocks = part_blocks_then_hold
