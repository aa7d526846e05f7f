"""Redis restarted (down 5 s, keeping nothing) while a worker is in the middle of a task, with
the worker run as ``manage.py start`` and the compose file run it: the prefork pool, whose main
process talks to Redis while a child process does the work. The main process sees the broker go
at once; the task's message, taken but not yet acknowledged (``CELERY_TASK_ACKS_LATE``), is then
in the child's hands.

What the user sees: the run, evaluation or fan-out part goes on and ends as if nothing happened
(one complete version, or one evaluation), the worker is still the same process, and the next
run is taken without anyone restarting it.

The break these tests caught: Celery 5.7.0 closes the lost connection after collecting it
(``Consumer.on_connection_error_after_connected``); closing the channel restores its
unacknowledged message through a transport that collecting already emptied, and the worker's
main process exited ("Unrecoverable error: AttributeError 'NoneType' object has no attribute
'hostname'", right after "Restoring 1 unacknowledged message"). Celery 5.6.3, with kombu 5.7.0
and redis-py 8.1.0 as with older ones, reconnects: hence ``celery<5.7`` in pyproject.toml.
``.ci/run`` also runs this file on the newest versions allowed (no lock).

Each test holds its task in the stage it means to catch (``TEST_HOLD_STAGE``, see
worker_barrier) until Redis is back and the worker has connected again, then lets it finish.
"""

import pytest

from tokenizers_app.models import CountPart, Evaluation, TrainingRun
from tokenizers_app.services.runs import start_training_run

from .helpers import import_text, made_up_words, sample_text, wait_for_run
from .test_faults import (  # noqa: F401 - own_redis and own_workers are fixtures
    FAN_OUT,
    CountingAPart,
    assert_one_complete_version,
    learning_merges,
    own_redis,
    own_workers,
    wait_for,
    wait_for_phase,
)

pytestmark = pytest.mark.slow

Status, Stage = TrainingRun.Status, TrainingRun.Stage
DOWN_SECONDS = 5  # as in the drill that found the break


@pytest.fixture
def hold(tmp_path):
    """The environment that holds a worker's task in ``stage`` until ``release()``."""
    release_file = tmp_path / "release"

    class Hold:
        @staticmethod
        def env(stage: str, after: int = 0) -> dict:
            return {"TEST_HOLD_STAGE": stage, "TEST_HOLD_AFTER": str(after),
                    "TEST_HOLD_RELEASE": str(release_file)}

        @staticmethod
        def release() -> None:
            release_file.touch()

    return Hold()


def prefork_worker(own_workers, own_redis, name: str, **env):
    return own_workers(name, CELERY_BROKER_URL=own_redis.url, TEST_WORKER_POOL="prefork", **env)


def restart_redis_and_wait_for_the_worker(own_redis, worker) -> None:
    """Restart Redis, then wait until the worker has noticed and connected again; its main
    process must not have exited on the way."""
    own_redis.restart(down_seconds=DOWN_SECONDS)

    def reconnected():
        log = worker.log_path.read_text(errors="replace")
        assert worker.process.poll() is None and "Unrecoverable error" not in log, (
            f"the worker's main process exited, or is exiting:\n{worker.log()}")
        return "Connected to redis" in log.partition("Connection to broker lost")[2]

    wait_for(reconnected, 60, "the worker to connect to Redis again", worker)


def assert_alive_and_takes_the_next_run(worker, corpus) -> None:
    """The same worker process, with no unrecoverable error, trains the next run."""
    again = start_training_run(corpora=[corpus], tokenizer_name="after-restart", vocab_size=300)
    again = wait_for_run(again, timeout=60, worker=worker)
    assert again.status == Status.SUCCEEDED, again.error
    assert worker.process.poll() is None
    assert "Unrecoverable error" not in worker.log_path.read_text(errors="replace")


def test_redis_restarted_mid_run_the_run_ends_with_one_version_and_the_worker_lives(
        own_redis, own_workers, hold):
    corpus = import_text(made_up_words(200_000), "restart")
    worker = prefork_worker(own_workers, own_redis, "redis-run", **hold.env(Stage.MERGE))
    run = start_training_run(corpora=[corpus], tokenizer_name="restart", vocab_size=1000)
    wait_for_phase(run, learning_merges, worker, "merging")

    restart_redis_and_wait_for_the_worker(own_redis, worker)
    run.refresh_from_db()
    assert (run.status, run.stage) == (Status.RUNNING, Stage.MERGE)  # still mid-training
    hold.release()
    run = wait_for_run(run, timeout=90, worker=worker)

    assert run.status == Status.SUCCEEDED, run.error
    assert run.attempt == 1  # the worker kept training: nothing was run again
    assert_one_complete_version(run)
    assert_alive_and_takes_the_next_run(worker, import_text(sample_text(20_000), "next"))


def test_redis_restarted_mid_fan_out_part_the_run_ends_with_one_version_and_the_worker_lives(
        own_redis, own_workers, hold):
    """Three parts counted by count tasks: each child process lets one through and holds the
    next, so every part's message has been taken when Redis goes (a message still waiting in
    Redis would be lost with it, and the reaper would have to send the run again)."""
    corpus = import_text(sample_text(900_000), "fanned")
    worker = prefork_worker(own_workers, own_redis, "redis-fan-out", **FAN_OUT,
                            FANOUT_PART_BYTES="310000", **hold.env(Stage.COUNT, after=1))
    run = start_training_run(corpora=[corpus], tokenizer_name="fanned", vocab_size=300)
    wait_for_phase(run, CountingAPart(), worker, "counting a fan-out part")

    restart_redis_and_wait_for_the_worker(own_redis, worker)
    run.refresh_from_db()
    assert (run.status, run.stage) == (Status.RUNNING, Stage.COUNT)  # still counting a part
    hold.release()
    run = wait_for_run(run, timeout=90, worker=worker)

    assert run.status == Status.SUCCEEDED, run.error
    assert run.attempt == 1 and run.fanout_parts == 3
    assert CountPart.objects.filter(run=run, attempt=1, done=True).count() == 3
    assert_one_complete_version(run)
    assert_alive_and_takes_the_next_run(worker, corpus)


def test_redis_restarted_mid_evaluation_it_ends_as_one_evaluation_and_the_worker_lives(
        own_redis, own_workers, hold):
    import_text(sample_text(20_000, offset=100_000), "held-out", is_evaluation=True)
    corpus = import_text(sample_text(20_000), "prose")
    worker = prefork_worker(own_workers, own_redis, "redis-evaluation", **hold.env("evaluate"))
    run = wait_for_run(start_training_run(corpora=[corpus], tokenizer_name="evaluated",
                                          vocab_size=300), worker=worker)
    assert run.status == Status.SUCCEEDED, run.error
    evaluation = Evaluation.objects.get()
    wait_for(lambda: Evaluation.objects.filter(pk=evaluation.pk,
                                               status=Evaluation.Status.RUNNING).exists(),
             60, "the evaluation to run", worker)

    restart_redis_and_wait_for_the_worker(own_redis, worker)
    evaluation.refresh_from_db()
    assert evaluation.status == Evaluation.Status.RUNNING  # still computing
    hold.release()
    wait_for(lambda: Evaluation.objects.filter(pk=evaluation.pk).exclude(
        status__in=[Evaluation.Status.QUEUED, Evaluation.Status.RUNNING]).exists(), 60,
        "the evaluation to finish", worker)

    evaluation = Evaluation.objects.get()  # one evaluation of the version on the corpus
    assert evaluation.status == Evaluation.Status.SUCCEEDED, evaluation.error
    assert evaluation.compression_ratio > 1 and evaluation.finished_at > evaluation.started_at
    assert_alive_and_takes_the_next_run(worker, corpus)
