"""Faults under real Celery worker processes (Postgres and Redis when DATABASE_URL and
CELERY_BROKER_URL are set): Redis restarted while a worker trains, and a worker killed (SIGKILL,
as an out-of-memory killer would) in each phase of a run and while evaluating. Afterwards there
is exactly one complete version (or none, and the run says why), never a version with missing
rows, and the run's final state is what happened.

What recovers the work of a killed worker, or a task message lost with a broker that keeps
nothing, is the reaper: ``reap_runs`` and ``reap_evaluations``, which celery beat runs every
minute (``tokenizers_app.tasks.reap_runs``). A running run whose heartbeat (written every
``RUN_HEARTBEAT_SECONDS`` at least while its worker lives) is older than ``RUN_STALE_SECONDS``
is queued again as its next attempt (failed after ``RUN_MAX_ATTEMPTS``,
cancelled when a cancel is pending), a queued run whose task may be lost is sent again, and a
running evaluation whose heartbeat is older than ``EVALUATION_STALE_SECONDS`` is queued again
(test_evaluation_heartbeat.py). These tests call
the reaper themselves, with a staleness of one second (or none). What makes the outcome exact:
every write of an attempt is guarded by its attempt number (a late attempt writes nothing), a
second delivery of a task finds its work taken, and a run's versions are saved with all their rows
in one transaction, which a killed worker never commits.
"""

import io
import itertools
import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.processes import free_port
import redis
from celery.app.task import Task
from django.core.management import call_command
from kombu import Connection

from tokenizers_app.models import (
    Corpus,
    CountPart,
    Evaluation,
    MergeRule,
    TokenizerVersion,
    TrainingRun,
    VocabEntry,
)
from tokenizers_app.services.evaluations import reap_evaluations
from tokenizers_app.services.runs import (
    cancel_training_run,
    reap_runs,
    start_training_run,
)

from .helpers import import_text, made_up_words, sample_text, wait_for_run, wait_until

pytestmark = pytest.mark.slow

Status, Stage = TrainingRun.Status, TrainingRun.Stage
REDIS_SERVER = Path(os.environ.get("REDIS_SERVER", "/usr/bin/redis-server"))
WORKER_NUMBERS = itertools.count(1)  # a worker's log file is named after it: one name, one worker


@pytest.fixture
def own_workers(session_worker, start_worker, transactional_db):
    """A function that starts a worker of this test's own (``name``, environment); the session's
    shared worker is stopped first, so that only these take the test's tasks, and they are stopped
    at the end of the test (the ``worker`` fixture starts the shared one again when needed)."""
    session_worker["worker"].stop()
    started = []

    def start(name: str, **env):
        started.append(start_worker(f"{name}-{next(WORKER_NUMBERS)}", **env))
        return started[-1]

    yield start
    for worker in started:
        worker.stop()


# -- the run's phases, as its row shows them ------------------------------------------------------

def counting(run: TrainingRun) -> bool:
    """Counting in the run's own task, with some of the corpus counted."""
    return run.stage == Stage.COUNT and not run.fanout_parts and run.progress_done > 0


class CountingAPart:
    """Counting a part of a fanned-out run, other than the first: a part is done, and a count
    task wrote the run's heartbeat since (a part that finishes adds its bytes to
    ``progress_done`` in the same write as its heartbeat; a part being counted writes only the
    heartbeat)."""

    def __init__(self):
        self.done, self.heartbeat = None, None

    def __call__(self, run: TrainingRun) -> bool:
        if run.stage != Stage.COUNT or not run.fanout_parts:
            return False
        if run.progress_done != self.done:
            self.done, self.heartbeat = run.progress_done, run.heartbeat_at
            return False
        return 0 < run.progress_done < run.progress_total and run.heartbeat_at > self.heartbeat


def learning_merges(run: TrainingRun) -> bool:
    """Merging, with some merges learned (the merge stage writes merges/s only as it learns)."""
    return run.stage == Stage.MERGE and bool(run.merges_per_second)


def saving(run: TrainingRun) -> bool:
    """Saving the versions (the transaction that writes them and their rows)."""
    return run.stage == Stage.SAVE


def wait_for(predicate, timeout: float, message: str, worker):
    """``wait_until``, showing the worker's log when it fails."""
    try:
        return wait_until(predicate, timeout, message)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n--- worker log ---\n{worker.log()}") from None


def wait_for_phase(run: TrainingRun, reached, worker, what: str) -> TrainingRun:
    """Wait until ``reached(run)``; fail at once if the run ends first (it was not interrupted)."""
    def check():
        run.refresh_from_db()
        assert not run.is_finished, (f"run {run.pk} ended ({run.status}, {run.error!r}) before "
                                     f"the test could interrupt it {what}")
        return reached(run)

    wait_for(check, 90, f"run {run.pk} to be {what}", worker)
    return run


# -- what a run leaves ----------------------------------------------------------------------------

def assert_verified(versions: int) -> None:
    """``manage.py verify`` finds every version's rows as its digest says (and every corpus)."""
    out = io.StringIO()
    call_command("verify", stdout=out, stderr=out)  # exits with status 1 on any problem
    assert out.getvalue() == (f"checked {versions} versions and {Corpus.objects.count()} "
                              f"corpora: all as recorded\n")


def assert_one_complete_version(run: TrainingRun) -> TokenizerVersion:
    """The run's one version, ready, with every merge and vocab row (and no other rows)."""
    version = TokenizerVersion.objects.get()
    assert list(run.versions.all()) == [version] and version.training_run_id == run.pk
    assert version.status == TokenizerVersion.Status.READY
    assert version.vocab_size == run.vocab_size and version.merge_count == run.vocab_size - 256
    assert MergeRule.objects.count() == version.merge_rules.count() == version.merge_count
    assert VocabEntry.objects.count() == version.vocab_entries.count() == version.vocab_size
    assert_verified(versions=1)
    return version


def assert_nothing_saved() -> None:
    """No version, and no merge or vocab row (of a version whose transaction was lost)."""
    assert not TokenizerVersion.objects.exists()
    assert not MergeRule.objects.exists() and not VocabEntry.objects.exists()


# -- a worker killed in each phase of a run -------------------------------------------------------

FAN_OUT = {"FANOUT_MIN_BYTES": "100000"}


@dataclass(frozen=True)
class Phase:
    """Where a run's worker is killed: the corpora and vocab size, the workers' settings, when
    the run's row shows the phase, and its stage. ``hold``: a stage the killed worker stops in
    (``TEST_HOLD_STAGE``, see worker_barrier) until it is killed; without it the corpora and vocab
    size make the phase last long enough to be caught."""

    texts: Callable[[], list[str]]
    vocab_size: int
    reached: Callable[[], Callable[[TrainingRun], bool]]  # a new predicate per test
    stage: str
    env: dict = field(default_factory=dict)
    hold: str = ""
    hold_after: int = 0  # tasks that go through the held stage first


PHASES = {
    # two corpora counted one after the other in one process, held after some of it
    "counting": Phase(lambda: [sample_text(300_000), sample_text(300_000, offset=1)], 300,
                      lambda: counting, Stage.COUNT, hold=Stage.COUNT),
    # three parts, counted by one task each: the first goes through, the second is held
    "counting-a-fan-out-part": Phase(lambda: [sample_text(900_000)], 300, CountingAPart,
                                     Stage.COUNT, {**FAN_OUT, "FANOUT_PART_BYTES": "310000"},
                                     hold=Stage.COUNT, hold_after=1),
    # made-up words counted in four parts, then held while learning merges
    "merging-fanned-out-counts": Phase(lambda: [made_up_words(400_000)], 3_000,
                                       lambda: learning_merges, Stage.MERGE,
                                       {**FAN_OUT, "FANOUT_PART_BYTES": "110000"},
                                       hold=Stage.MERGE),
    # 60,000 merge and vocab rows to write: saving takes about a second
    "saving": Phase(lambda: [made_up_words(2_000_000)], 60_000, lambda: saving, Stage.SAVE),
}


def start_and_kill(phase: Phase, own_workers, what: str) -> TrainingRun:
    """Start a run on a worker of its own and SIGKILL the worker once the run is ``what``."""
    corpora = [import_text(text, f"killed-{n}") for n, text in enumerate(phase.texts())]
    held = ({"TEST_HOLD_STAGE": phase.hold, "TEST_HOLD_AFTER": str(phase.hold_after)}
            if phase.hold else {})
    worker = own_workers("killed", **phase.env, **held)
    run = start_training_run(corpora=corpora, tokenizer_name="killed",
                             vocab_size=phase.vocab_size)
    wait_for_phase(run, phase.reached(), worker, what)
    worker.kill()
    run.refresh_from_db()
    assert (run.status, run.attempt, run.stage) == (Status.RUNNING, 1, phase.stage)
    assert_nothing_saved()
    return run


@pytest.mark.parametrize("phase", PHASES.values(), ids=PHASES.keys())
def test_a_worker_killed_in_each_phase_of_a_run_leaves_one_complete_version_after_a_restart(
        phase, own_workers):
    """Killed in any phase, the attempt leaves no version and no row; the reaper queues the run
    again and a new worker trains it from the start: one version, every row, attempt 2."""
    run = start_and_kill(phase, own_workers, f"in stage {phase.stage}")

    replacement = own_workers("replacement", **phase.env)
    # the replacement may first take tasks of the killed attempt (the other parts of a fanned-out
    # run): they count for it while it still owns the run; then its heartbeat goes stale
    wait_for(lambda: reap_runs(stale_seconds=1)["requeued"], 30,
             "the reaper to queue again the run of the killed worker", replacement)
    run = wait_for_run(run, timeout=120, worker=replacement)

    assert run.status == Status.SUCCEEDED, run.error
    assert (run.attempt, run.error, run.stage, run.progress_done) == (2, "", Stage.SAVE, 1)
    assert run.finished_at is not None
    assert_one_complete_version(run)
    if phase.env:
        assert run.fanout_parts == CountPart.objects.filter(run=run, attempt=2, done=True).count()


@pytest.mark.parametrize("cancel", [False, True], ids=["out-of-attempts", "cancel-pending"])
def test_a_run_killed_while_saving_that_is_not_run_again_ends_with_no_version_saying_why(
        cancel, own_workers):
    """A run killed mid-save that may not run again (its attempts used up, or a cancel asked of
    it meanwhile) ends failed, saying what happened and what to do, or cancelled; nothing of
    the lost transaction is left."""
    run = start_and_kill(PHASES["saving"], own_workers, "saving")
    if cancel:
        cancel_training_run(run=run)  # asked of a run whose worker is gone: the reaper ends it
        assert (run.status, run.cancel_requested) == (Status.RUNNING, True)

    def reaped():  # the first tries find the heartbeat fresh: nothing to do
        outcome = reap_runs(stale_seconds=1, max_attempts=1)
        return outcome if any(outcome.values()) else None

    outcome = wait_until(reaped, 10, "the reaper to end the run of the killed worker")
    run.refresh_from_db()

    assert outcome == {"requeued": [], "failed": [] if cancel else [run.pk],
                       "cancelled": [run.pk] if cancel else [], "resent": []}
    assert run.finished_at is not None and run.attempt == 1
    if cancel:
        assert (run.status, run.error) == (Status.CANCELLED, "")
    else:
        assert run.status == Status.FAILED
        assert run.error.startswith("the worker running this run stopped responding 1 times")
        assert run.error.endswith("it may have run out of memory or been killed: check the "
                                  "worker logs, then start the run again")
    assert_nothing_saved()
    assert not run.versions.exists()
    assert_verified(versions=0)


def test_a_worker_killed_while_evaluating_gives_one_evaluation_after_the_reaper(own_workers):
    """An evaluation whose worker is killed stays running (its heartbeat stopped) until the
    reaper queues it again; a new worker computes it: one evaluation, succeeded."""
    held_out = import_text(made_up_words(3_000_000, seed=1), "held-out", is_evaluation=True)
    corpus = import_text(sample_text(20_000), "prose")
    worker = own_workers("evaluating")
    run = start_training_run(corpora=[corpus], tokenizer_name="evaluated", vocab_size=300)
    run = wait_for_run(run, worker=worker)
    assert run.status == Status.SUCCEEDED, run.error
    evaluation = Evaluation.objects.get(version=run.versions.get(), corpus=held_out)

    def running():
        evaluation.refresh_from_db()
        assert evaluation.status in (Evaluation.Status.QUEUED, Evaluation.Status.RUNNING), (
            f"evaluation ended ({evaluation.status}) before the test could interrupt it")
        return evaluation.status == Evaluation.Status.RUNNING

    wait_for(running, 60, "the evaluation to run", worker)
    worker.kill()
    evaluation.refresh_from_db()
    assert evaluation.status == Evaluation.Status.RUNNING and not evaluation.metrics

    replacement = own_workers("evaluating-again")
    wait_until(lambda: reap_evaluations(stale_seconds=1), 10,
               "the reaper to queue the evaluation again")
    wait_for(lambda: Evaluation.objects.filter(pk=evaluation.pk).exclude(
        status__in=[Evaluation.Status.QUEUED, Evaluation.Status.RUNNING]).exists(), 60,
        "the evaluation to finish", replacement)

    evaluation = Evaluation.objects.get()  # one evaluation of the version on the corpus
    assert evaluation.status == Evaluation.Status.SUCCEEDED, evaluation.error
    assert evaluation.compression_ratio == evaluation.metrics["compression_ratio"] > 1
    assert evaluation.word_tokens and evaluation.finished_at > evaluation.started_at
    assert_verified(versions=1)


def test_a_worker_killed_mid_part_of_a_fanned_out_evaluation_ends_in_one_complete_evaluation(
        own_workers, settings, tmp_path):
    """A corpus evaluated in parts: the worker is killed in the middle of its second part. A
    new worker takes the parts still queued; once no part moves, the reaper queues the
    evaluation again, the new attempt evaluates only the parts not done, and the merged metrics
    are those of one process."""
    from tokenizers_app.models import EvaluationPart
    from tokenizers_app.services.evaluations import evaluate_version
    from tokenizers_app.services.queue import EVALUATE, send_on_commit

    from .helpers import train

    env = {"FANOUT_MIN_BYTES": "10000", "FANOUT_PART_BYTES": "60000"}
    version = train(import_text(sample_text(20_000), "prose")).versions.get()
    held_out = import_text(made_up_words(400_000, seed=2), "held-out")
    expected = evaluate_version(version=version, corpus=held_out).metrics  # in one process
    Evaluation.objects.filter(version=version).update(status="queued", metrics={}, attempts=0)
    evaluation = Evaluation.objects.get(version=version)
    marker = tmp_path / "held"
    worker = own_workers("evaluating-parts", **env, TEST_HOLD_EVALUATION_PART=str(marker),
                         TEST_HOLD_AFTER="1")
    send_on_commit(EVALUATE, evaluation.pk)
    wait_for(marker.exists, 60, "a part to be held mid-way", worker)
    worker.kill()
    evaluation.refresh_from_db()
    assert evaluation.status == Evaluation.Status.RUNNING and evaluation.fanout_parts > 3
    first = EvaluationPart.objects.filter(evaluation=evaluation, attempt=1)
    done_first = set(first.filter(done=True).values_list("index", flat=True))
    assert 1 <= len(done_first) < evaluation.fanout_parts

    replacement = own_workers("evaluating-parts-again", **env)
    wait_until(lambda: reap_evaluations(stale_seconds=1), 10,
               "the reaper to queue the evaluation again")
    wait_for(lambda: Evaluation.objects.filter(pk=evaluation.pk).exclude(
        status__in=[Evaluation.Status.QUEUED, Evaluation.Status.RUNNING]).exists(), 120,
        "the evaluation to finish", replacement)

    evaluation = Evaluation.objects.get()  # one evaluation of the version on the corpus
    assert evaluation.status == Evaluation.Status.SUCCEEDED, evaluation.error
    assert evaluation.attempts == 2
    second = EvaluationPart.objects.filter(evaluation=evaluation, attempt=2)
    carried = set(second.filter(worker="(carried over)").values_list("index", flat=True))
    redone = set(second.exclude(worker="(carried over)").values_list("index", flat=True))
    # the parts done before the kill (and those the replacement finished of the first attempt
    # before the reaper took it for dead) are carried over; only the others are evaluated again
    assert done_first <= carried == set(first.filter(done=True).values_list("index", flat=True))
    assert redone and redone == set(range(evaluation.fanout_parts)) - carried
    for name, value in expected.items():
        if name != "encode_throughput_mb_s":
            assert evaluation.metrics[name] == value, name
    assert evaluation.word_tokens


# -- Redis restarted ------------------------------------------------------------------------------


class RedisServer:
    """A ``redis-server`` of the test's own on a free port, keeping nothing on disk (no RDB
    snapshot, no AOF): what it holds is lost when it stops."""

    def __init__(self, folder: Path):
        folder.mkdir(parents=True, exist_ok=True)
        self.folder, self.port = folder, free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen | None = None

    def start(self) -> "RedisServer":
        command = [str(REDIS_SERVER), "--port", str(self.port), "--bind", "127.0.0.1",
                   "--save", "", "--appendonly", "no", "--dir", str(self.folder),
                   "--logfile", str(self.folder / "redis.log")]
        self.process = subprocess.Popen(command, cwd=self.folder, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.STDOUT, start_new_session=True)
        wait_until(self.answers, 10, f"redis-server on port {self.port} to answer")
        return self

    def answers(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"redis-server exited:\n{self.log()}")
        try:
            return self.client().ping()
        except redis.ConnectionError:
            return False

    def stop(self) -> None:
        """SIGTERM: redis-server exits at once, saving nothing."""
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)

    def restart(self, down_seconds: float) -> None:
        self.stop()
        time.sleep(down_seconds)
        self.start()

    def client(self) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.port, socket_timeout=2)

    def log(self) -> str:
        path = self.folder / "redis.log"
        return path.read_text(errors="replace")[-3000:] if path.exists() else ""


@pytest.fixture
def own_redis(tmp_path, monkeypatch):
    """A Redis of this test's own (the shared one is never touched), to which this process sends
    its tasks while the test runs (the web side of the registry, pointed at it)."""
    if not REDIS_SERVER.is_file():
        reason = f"{REDIS_SERVER} not found: install redis-server (apt-get install redis-server)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    server = RedisServer(tmp_path / "redis").start()
    connection = Connection(server.url)  # reconnects when a send finds it broken
    send = Task.apply_async

    def send_to_own_redis(task, args=None, kwargs=None, **options):
        return send(task, args, kwargs, connection=connection, **options)

    monkeypatch.setattr(Task, "apply_async", send_to_own_redis)
    try:
        yield server
    finally:
        connection.release()
        server.stop()


def test_redis_restarted_while_a_worker_trains_the_run_finishes_with_one_version(
        own_redis, own_workers):
    """The restart loses the task's message (Redis keeps nothing), but the worker holds the task
    and trains on without the broker: the run is saved, then acknowledging the message fails,
    and the worker connects again and takes the next run. Nothing is run twice, so no reaper is
    needed (for a message lost before a worker took it, see the next test)."""
    corpus = import_text(made_up_words(2_000_000), "restart")
    # the pure loop: the compiled one may finish its merges before Redis is back
    worker = own_workers("redis", CELERY_BROKER_URL=own_redis.url, BPE_PURE_PYTHON="1")
    run = start_training_run(corpora=[corpus], tokenizer_name="restart", vocab_size=60_000)
    wait_for_phase(run, learning_merges, worker, "merging")

    own_redis.restart(down_seconds=1.5)
    run.refresh_from_db()
    assert (run.status, run.stage) == (Status.RUNNING, Stage.MERGE)  # restarted mid-training
    run = wait_for_run(run, timeout=90, worker=worker)

    assert run.status == Status.SUCCEEDED, run.error
    assert run.attempt == 1  # the worker kept training: nothing was run again
    assert_one_complete_version(run)

    def reconnected():  # it noticed when it acknowledged the task, after the run was saved
        log = worker.log_path.read_text(errors="replace")
        return "Connected to redis" in log.partition("Connection to broker lost")[2]

    wait_for(reconnected, 30, "the worker to connect to Redis again", worker)
    again = start_training_run(corpora=[corpus], tokenizer_name="after-restart", vocab_size=300)
    again = wait_for_run(again, timeout=60, worker=worker)
    assert again.status == Status.SUCCEEDED, again.error  # it takes the next run


def test_a_run_queued_when_redis_restarts_is_sent_again_by_the_reaper(own_redis, own_workers):
    """A run whose message was lost with Redis stays queued: its row is the truth, and the
    reaper sends the task again (a queued run sent more than RUN_STALE_SECONDS ago; here at
    once), so the run finishes with one version. A second delivery would find it taken."""
    from registry.celery import app

    queue = app.conf.task_default_queue
    corpus = import_text(sample_text(20_000), "queued")
    run = start_training_run(corpora=[corpus], tokenizer_name="queued", vocab_size=400)
    assert own_redis.client().llen(queue) == 1  # no worker yet: the task waits in Redis

    own_redis.restart(down_seconds=0.5)
    assert own_redis.client().llen(queue) == 0  # and is lost with it
    worker = own_workers("redis-queued", CELERY_BROKER_URL=own_redis.url)
    run.refresh_from_db()
    assert run.status == Status.QUEUED

    assert reap_runs(stale_seconds=0) == {"requeued": [], "failed": [], "cancelled": [],
                                          "resent": [run.pk]}
    run = wait_for_run(run, timeout=60, worker=worker)
    assert run.status == Status.SUCCEEDED, run.error
    assert run.attempt == 1
    assert_one_complete_version(run)
