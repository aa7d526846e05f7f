"""The tasks on real Celery worker processes (Postgres and Redis when DATABASE_URL and
CELERY_BROKER_URL are set): training, cancelling, killed workers, duplicate deliveries."""

import time

import pytest

from tokenizers_app import tasks
from tokenizers_app.bpe import train_bpe
from tokenizers_app.bpe.pretokenize import PreTokenizer
from tokenizers_app.bpe.training import Ticker, count_pretokens
from tokenizers_app.models import CountPart, TokenizerVersion, TrainingRun
from tokenizers_app.services.fanout import merged_part_counts
from tokenizers_app.services.runs import (
    cancel_training_run,
    reap_runs,
    start_training_run,
)

from .helpers import import_text, sample_text, wait_for_run, wait_until

pytestmark = pytest.mark.slow


def test_worker_trains_a_version_equal_to_train_bpe_on_the_same_file(worker):
    corpus = import_text(sample_text(40_000), "prose")
    run = start_training_run(corpora=[corpus], tokenizer_name="prose-bpe",
                             vocab_size=600, special_tokens=["<|endoftext|>"])

    run = wait_for_run(run, worker=worker)

    assert run.status == TrainingRun.Status.SUCCEEDED, run.error
    version = run.versions.get()
    expected = train_bpe(corpus.path, 600, special_tokens=["<|endoftext|>"])
    tokenizer = version.load_tokenizer()
    assert (version.status, version.number) == ("ready", 1)
    assert tokenizer.merges == expected.merges
    assert tokenizer.merge_counts == expected.merge_counts
    assert tokenizer.vocab == expected.vocab
    assert run.stage_seconds.keys() >= {"count", "merge", "save"}


def start_long_run(name: str, vocab_size: int) -> TrainingRun:
    """A run whose merge loop takes seconds: pattern "none" makes the whole corpus one pre-token,
    so every merge rewrites a long word."""
    corpus = import_text(sample_text(465_000), name)
    return start_training_run(corpora=[corpus], tokenizer_name=name,
                              vocab_size=vocab_size, pattern="none")


def wait_for_merging(run: TrainingRun, worker) -> TrainingRun:
    def merging():
        run.refresh_from_db()
        assert not run.is_finished, f"run ended before the test could interrupt it: {run.status}"
        return run.stage == "merge" and run.progress_done > 0

    wait_until(merging, 60, f"run {run.pk} to be merging\n{worker.log()}")
    return run


def test_a_running_run_writes_progress_and_heartbeat_every_second(worker):
    run = wait_for_merging(start_long_run("long-progress", vocab_size=60_000), worker)
    seen = []
    for _ in range(2):
        time.sleep(1.0)
        run.refresh_from_db()
        seen.append((run.heartbeat_at, run.progress_done, run.merges_per_second))
    cancel_training_run(run=run)
    wait_for_run(run, timeout=5, worker=worker)

    heartbeats = [heartbeat for heartbeat, _, _ in seen]
    assert heartbeats == sorted(set(heartbeats))  # a new heartbeat every second
    assert [done for _, done, _ in seen] == sorted({done for _, done, _ in seen})
    assert all(rate and rate > 0 for _, _, rate in seen)


def test_cancelling_a_running_run_stops_it_within_two_seconds(worker):
    run = wait_for_merging(start_long_run("long-cancel", vocab_size=60_000), worker)
    asked = time.monotonic()

    cancel_training_run(run=run)
    run = wait_for_run(run, timeout=5, worker=worker)

    assert time.monotonic() - asked < 2
    assert run.status == TrainingRun.Status.CANCELLED
    assert not TokenizerVersion.objects.exists()


def test_a_worker_killed_mid_training_finishes_after_a_restart_with_one_version(
        session_worker, start_worker, transactional_db):
    session_worker["worker"].stop()  # only the held worker takes the first attempt
    held = start_worker("held", TEST_HOLD_STAGE="merge")  # it stops mid-merge: see worker_barrier
    corpus = import_text(sample_text(200_000), "killed")
    run = wait_for_merging(start_training_run(corpora=[corpus], tokenizer_name="killed",
                                              vocab_size=1_000), held)

    held.kill()
    run.refresh_from_db()
    assert run.status == TrainingRun.Status.RUNNING and run.attempt == 1
    replacement = session_worker["worker"] = start_worker("main")
    wait_until(lambda: reap_runs(stale_seconds=1)["requeued"], 10,
               "the reaper to re-queue the run of the killed worker")
    run = wait_for_run(run, timeout=120, worker=replacement)

    assert run.status == TrainingRun.Status.SUCCEEDED, run.error
    assert run.attempt == 2
    version = TokenizerVersion.objects.get()
    assert version.merge_rules.count() == version.merge_count  # as many rows as merges made
    assert version.vocab_entries.count() == version.vocab_size == version.merge_count + 256
    assert version.load_tokenizer().merges == train_bpe(corpus.path, 1_000).merges


def test_a_task_delivered_twice_creates_one_version(worker):
    corpus = import_text(sample_text(20_000), "twice")
    run = start_training_run(corpora=[corpus], tokenizer_name="twice", vocab_size=400)
    duplicate = tasks.execute_training_run.delay(run.pk)

    run = wait_for_run(run, worker=worker)
    wait_until(lambda: f"[{duplicate.id}] succeeded" in worker.log(), 30,
               "the worker to run the duplicate delivery")

    assert run.status == TrainingRun.Status.SUCCEEDED and run.attempt == 1
    assert TokenizerVersion.objects.count() == 1


def test_fan_out_counting_with_two_workers_gives_the_counts_of_one_process(
        session_worker, start_worker, transactional_db, tmp_path):
    session_worker["worker"].stop()  # only the two fan-out workers take this run
    env = {"FANOUT_MIN_BYTES": "100000", "FANOUT_PART_BYTES": "250000",
           "FANOUT_KEEP_COUNTS": "1", "TEST_BARRIER_DIR": str(tmp_path)}  # see worker_barrier
    workers = [start_worker("fan-a", **env), start_worker("fan-b", **env)]
    try:
        corpus = import_text(sample_text(1_500_000), "big")
        run = start_training_run(corpora=[corpus], tokenizer_name="big",
                                 vocab_size=500)
        run = wait_for_run(run, timeout=120, worker=workers[0])
    finally:
        for fan_out_worker in workers:
            fan_out_worker.stop()

    assert run.status == TrainingRun.Status.SUCCEEDED, run.error
    parts = CountPart.objects.filter(run=run)
    assert run.fanout_parts == parts.count() >= 5
    assert len({part.worker for part in parts}) == 2
    one_process = count_pretokens(corpus.path, PreTokenizer("gpt2"), [], Ticker(None, None), 1)
    assert merged_part_counts(run=run, attempt=run.attempt) == one_process
    assert run.versions.get().load_tokenizer().merges == train_bpe(corpus.path, 500).merges
