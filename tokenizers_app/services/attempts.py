"""One attempt at a training run, as a run in one task and a fanned-out run share it: progress
written to the run row, the outcome recorded in words a person can act on, and the versions
saved in one transaction."""

from __future__ import annotations

import logging
import time
from contextlib import contextmanager

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from ..bpe import TrainingCancelled
from ..bpe.compiled import CORE_PATH
from ..engines import kind_of
from ..engines.training import Trained
from ..errors import REFUSALS, is_disk_full, is_library_panic, panic_words
from ..models import TokenizerVersion, TrainingRun
from .extension_results import sweep_prefix
from .heartbeats import Heartbeat
from .versions import add_version

log = logging.getLogger(__name__)

Status, Stage = TrainingRun.Status, TrainingRun.Stage


class LostRun(Exception):
    """This attempt no longer owns its run (the reaper gave it to another attempt)."""


class RunReporter:
    """Writes one attempt's stage, progress, merges/s and heartbeat to its run row (at most every
    ``WRITE_SECONDS``) and notices a cancel request on the same write.

    ``progress`` and ``should_stop`` are the core's callbacks (called up to ~5 times a second).
    With ``track_progress=False`` (a count task of a fanned-out run) only the heartbeat is
    written.
    """

    WRITE_SECONDS = 0.4

    def __init__(self, run: TrainingRun, seconds: dict | None = None,
                 track_progress: bool = True):
        self.run, self.attempt, self.track_progress = run, run.attempt, track_progress
        self.seconds = dict(seconds or {})
        self.stage, self.stage_start = "", time.monotonic()
        self.last_write, self.cancelled = float("-inf"), False

    def progress(self, stage: str, done: int, total: int) -> None:
        now = time.monotonic()
        if stage != self.stage:
            self.seconds[self.stage] = self.seconds.get(self.stage, 0) + now - self.stage_start
            self.stage, self.stage_start, self.last_write = stage, now, float("-inf")
        if now - self.last_write < self.WRITE_SECONDS:
            return
        self.last_write = now
        if not self.track_progress:
            return self.write()
        rate = done / (now - self.stage_start) if stage == Stage.MERGE and now > self.stage_start \
            else None
        self.write(stage=stage, progress_done=done, progress_total=total,
                   merges_per_second=rate, stage_seconds=self.stage_seconds())

    def should_stop(self) -> bool:
        return self.cancelled

    def stage_seconds(self) -> dict:
        seconds = dict(self.seconds)
        seconds[self.stage] = seconds.get(self.stage, 0) + time.monotonic() - self.stage_start
        return {stage: round(s, 3) for stage, s in seconds.items() if stage}

    def write(self, **fields) -> None:
        """Update the row while this attempt owns it and no cancel is pending."""
        owned = self.run.owned(self.attempt)
        if owned.filter(cancel_requested=False).update(heartbeat_at=timezone.now(), **fields):
            return
        if not owned.exists():
            raise LostRun(f"run {self.run.pk} attempt {self.attempt} was taken over")
        self.cancelled = True


@contextmanager
def recording_outcome(run: TrainingRun):
    """Record how an attempt ended: cancelled, or failed with a message a person can act on.
    An attempt that lost its run to another attempt records nothing. While it runs, a
    ``Heartbeat`` beats for it."""
    attempt = run.attempt
    heartbeat = Heartbeat(f"run {run.pk}", lambda: run.owned(attempt))
    try:
        heartbeat.start_unless_in_transaction()
        yield
    except TrainingCancelled:
        run.finish(Status.CANCELLED)
    except LostRun as exc:
        log.warning("%s", exc)
    except REFUSALS as exc:
        _fail(run, str(exc))
    except SoftTimeLimitExceeded:
        _fail(run, f"the run took longer than the limit of {settings.TASK_TIME_LIMIT_SECONDS} s "
                   f"for one task (TASK_TIME_LIMIT_SECONDS) and was stopped")
    except Exception as exc:
        if is_disk_full(exc):
            log.warning("run %s failed: no space left writing %s", run.pk, exc.filename)
            _fail(run, "the worker's disk is full (no space left under MEDIA_ROOT): nothing was "
                       "saved; free some space and start the run again")
        else:
            log.exception("run %s failed", run.pk)
            _fail(run, f"unexpected error in the worker: {type(exc).__name__}: {exc} (the "
                       f"worker log has the details)")
    except BaseException as exc:  # a library's panic: in words here, never out of the task
        if not is_library_panic(exc):
            raise
        log.error("run %s failed: the library panicked: %s", run.pk, exc)
        _fail(run, panic_words(exc, "this run"))
    finally:
        heartbeat.stop()


def _fail(run: TrainingRun, error: str) -> None:
    """Fail the attempt, unless a cancel was asked meanwhile: one long step (a custom pattern's
    match, bounded by MATCH_SECONDS) notices no cancel, and when it ends the cancel wins."""
    if run.owned(run.attempt).filter(cancel_requested=True).exists():
        run.finish(Status.CANCELLED)
    else:
        run.finish(Status.FAILED, error=error)


def save_training_result(*, run: TrainingRun, reporter: RunReporter,
                         result: Trained) -> None:
    """Save the run's versions (the full vocab size, and each sweep size) and mark it succeeded,
    in one transaction; a cancel that arrived meanwhile wins and nothing is saved."""
    reporter.progress(Stage.SAVE, 0, 1)
    full = result.tokenizer()
    prefix = sweep_prefix(run)  # the tokenizer of a smaller vocab size, from the full one
    cores = [prefix(full, size) for size in run.sweep] + [full]
    digests = [kind_of(core).digest(core)  # an extension of a library's model: its file's
               for core in cores]
    with transaction.atomic():
        locked = run.owned(run.attempt).select_for_update().first()
        if locked is None:
            raise LostRun(f"run {run.pk} attempt {run.attempt} was taken over before saving")
        if locked.cancel_requested:
            raise TrainingCancelled("cancelled before the version was saved")
        versions = [add_version(tokenizer=run.tokenizer, core=core, digest=digest,
                                source=TokenizerVersion.Source.TRAINING, training_run=run,
                                created_by=run.created_by)
                    for core, digest in zip(cores, digests)]
        run.versions.add(*versions)
        seconds = reporter.stage_seconds()
        merging = seconds.get(Stage.MERGE, 0)
        rate = len(result.merges) / merging if merging > 0 else run.merges_per_second
        run.finish(Status.SUCCEEDED, stage=Stage.SAVE, progress_done=1, progress_total=1,
                   merges_per_second=rate, stage_seconds=seconds,
                   core_path=CORE_PATH,  # which BPE core ran the merges
                   stop_reason=result.stop_reason,  # fewer merges than asked: the page says why
                   # a char-level alphabet above the vocab size asked for: said too
                   larger_reason=larger_reason(run, full) if len(full.vocab) > run.vocab_size
                   else "")


def larger_reason(run: TrainingRun, full) -> str:
    """Why the version of a character-level run holds more tokens than asked: training keeps
    the whole alphabet it saw (as Hugging Face's trainer does), so a vocab size below special
    tokens + alphabet gives exactly those, with no merge."""
    base = len(full.vocab) - len(full.merges)
    return (f"the version has {len(full.vocab):,} tokens, not the {run.vocab_size:,} asked for: "
            f"character-level BPE keeps every character seen in training, and this corpus's "
            f"alphabet with the special tokens is {base:,} tokens. Ask for more than {base:,} "
            f"to learn merges.")
