"""Ten training runs submitted at once with two workers: all finish, each with exactly one
version.

    python bench/runs_load.py [--runs 10] [--workers 2] [--kilobytes 300] [--timeout 600]

Sets up a throwaway registry in a temporary directory (SQLite, media, and the broker kept in
files, so no server is needed; ``DEBUG`` off), imports ``--kilobytes`` KB of prose (Python's own
help topics) as a corpus, and starts ``--workers`` Celery workers (``celery -A registry worker
--concurrency=1``, each in its own process group). Then it submits ``--runs`` training runs of
one tokenizer at once (``start_training_run``; vocab sizes 500, 650, 800, ...; each its own
version), waits until every run has finished (``--timeout`` seconds at most), and checks that
each succeeded with exactly one version of its own (from its run, of its vocab size) and that
the versions are numbered 1 to ``--runs``, no number twice. It prints the wall time from
submission to the last run finished, each run's wait in the queue and its time on a worker, the
most runs running at the same time, and the training tasks each worker finished (a duplicate
delivery of a run already taken does nothing); it exits with status 1 if a check fails. The
workers are stopped in the end, whatever happened.
"""

from __future__ import annotations

import argparse
import io
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
NAME = "load-runs"
# settings that would point this registry at another one's database, broker, cache or folders
FOREIGN = ("DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL", "CELERY_BROKER_DIR", "SQLITE_PATH",
           "MEDIA_ROOT", "STATIC_ROOT", "CELERY_TASK_DEFAULT_QUEUE")


def throwaway_environment(folder: Path) -> dict[str, str]:
    environment = {key: value for key, value in os.environ.items() if key not in FOREIGN}
    environment.update(DJANGO_SETTINGS_MODULE="registry.settings", DEBUG="0",
                       SECRET_KEY=secrets.token_urlsafe(50), REGISTRY_VAR_DIR=str(folder),
                       PYTHONPATH=str(REPO))
    return environment


class Worker:
    """``celery -A registry worker --concurrency=1`` in a process group of its own."""

    def __init__(self, name: str, environment: dict[str, str], folder: Path):
        self.name, self.log_path = name, folder / f"{name}.log"
        command = [sys.executable, "-m", "celery", "-A", "registry", "worker",
                   "--concurrency=1", "--loglevel=INFO", "-n", f"{name}@%h",
                   "--without-gossip", "--without-mingle", "--without-heartbeat"]
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(command, cwd=REPO, env=environment, stdout=log,
                                            stderr=subprocess.STDOUT, start_new_session=True)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_ready(self, deadline: float) -> None:
        while " ready." not in self.log():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"worker {self.name} did not start:\n{self.log()[-3000:]}")
            time.sleep(0.1)

    def training_tasks(self) -> tuple[int, int]:
        """(training tasks this worker finished, of which duplicate deliveries of a run already
        taken, which did nothing), from its log."""
        lines = self.log().splitlines()
        done = sum("execute_training_run[" in line and " succeeded in " in line for line in lines)
        return done, sum(" is not queued: nothing to do" in line for line in lines)

    def stop(self) -> None:
        """SIGTERM to the whole group (the worker and its pool process), SIGKILL after 20 s."""
        if self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


def most_at_once(intervals: list[tuple[float, float]]) -> int:
    """The largest number of (start, end) intervals that overlap."""
    events = sorted([(start, 1) for start, _ in intervals] + [(end, -1) for _, end in intervals])
    running = most = 0
    for _, step in events:  # at the same instant an end (-1) sorts before a start
        running += step
        most = max(most, running)
    return most


def check(runs, versions) -> list[str]:
    """What is wrong with the finished runs and the tokenizer's versions (nothing: [])."""
    problems = []
    for run in runs:
        own = list(run.versions.all())
        if run.status != run.Status.SUCCEEDED:
            problems.append(f"run {run.pk} is {run.status}"
                            + (f": {run.error}" if run.error else f" (stage {run.stage!r})"))
        elif len(own) != 1:
            problems.append(f"run {run.pk} has {len(own)} versions, not one")
        elif (own[0].training_run_id, own[0].vocab_size) != (run.pk, run.vocab_size):
            problems.append(f"run {run.pk}'s version {own[0].label} is from run "
                            f"{own[0].training_run_id}, of vocab {own[0].vocab_size}")
    numbers = sorted(version.number for version in versions)
    if numbers != list(range(1, len(runs) + 1)):
        problems.append(f"the versions of {NAME} are numbered {numbers}, not 1 to {len(runs)}")
    return problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--workers", type=int, default=2, help="Celery workers, concurrency 1")
    parser.add_argument("--kilobytes", type=int, default=300, help="of prose in the corpus")
    parser.add_argument("--timeout", type=float, default=600.0,
                        help="seconds the runs may take in all")
    options = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-runs-load-"))
    environment = throwaway_environment(folder)
    for key in FOREIGN:  # this process is a client of the throwaway registry too
        os.environ.pop(key, None)
    os.environ.update(environment)

    import django

    django.setup()
    from registry.local_dirs import ensure_local_dirs  # noqa: E402  (a fresh checkout has no var/)
    ensure_local_dirs()
    from pydoc_data.topics import topics

    from django.core.management import call_command

    from registry.local_dirs import ensure_local_dirs
    from tokenizers_app.models import TokenizerVersion, TrainingRun
    from tokenizers_app.services.corpora import import_corpus
    from tokenizers_app.services.runs import start_training_run

    workers: list[Worker] = []
    problems: list[str] = []
    try:
        ensure_local_dirs()
        call_command("migrate", verbosity=0)
        prose = "".join(topics[key] for key in sorted(topics))
        text = (prose * (1 + options.kilobytes * 1000 // len(prose))).encode()
        text = text[:options.kilobytes * 1000].decode(errors="ignore").encode()  # whole chars
        corpus = import_corpus(stream=io.BytesIO(text), name="prose")
        started = time.monotonic()
        workers = [Worker(f"bench-{index + 1}", environment, folder)
                   for index in range(options.workers)]
        for worker in workers:
            worker.wait_ready(started + 120)
        print(f"{options.workers} workers (concurrency 1 each, filesystem broker, SQLite) ready "
              f"in {time.monotonic() - started:.1f} s; corpus {corpus.size_bytes / 1e3:.0f} KB "
              f"of prose; {os.cpu_count()} cores")

        submitted = time.monotonic()
        runs = [start_training_run(corpora=[corpus], tokenizer_name=NAME,
                                   vocab_size=500 + 150 * index,
                                   special_tokens=["<|endoftext|>"])
                for index in range(options.runs)]
        print(f"{options.runs} runs submitted in {time.monotonic() - submitted:.2f} s")
        ids = [run.pk for run in runs]
        while True:
            left = TrainingRun.objects.filter(pk__in=ids).active().count()
            if not left:
                break
            if time.monotonic() - submitted > options.timeout:
                problems.append(f"{left} of {options.runs} runs not finished after "
                                f"{options.timeout:g} s")
                break
            if all(worker.process.poll() is not None for worker in workers):
                problems.append("every worker exited")
                break
            time.sleep(0.2)
        wall = time.monotonic() - submitted

        runs = list(TrainingRun.objects.filter(pk__in=ids).order_by("pk")
                    .prefetch_related("versions"))
        versions = list(TokenizerVersion.objects.filter(tokenizer__name=NAME))
        problems += check(runs, versions)
        print(f"{'run':>4} {'vocab':>6} {'status':<10} {'version':<14} {'attempts':>8} "
              f"{'queued s':>8} {'worker s':>8}")
        for run in runs:
            queued = ((run.started_at - run.created_at).total_seconds()
                      if run.started_at else None)
            labels = ",".join(version.label for version in run.versions.all()) or "-"
            print(f"{run.pk:>4} {run.vocab_size:>6} {run.status:<10} {labels:<14} "
                  f"{run.attempt:>8} {queued if queued is not None else float('nan'):8.2f} "
                  f"{run.total_seconds() or float('nan'):8.2f}")
        spans = [(run.started_at.timestamp(), run.finished_at.timestamp()) for run in runs
                 if run.started_at and run.finished_at]
        print(f"wall time, submission to the last run finished: {wall:.1f} s; most runs running "
              f"at once: {most_at_once(spans)}")
        tasks = {worker.name: worker.training_tasks() for worker in workers}
        print("training tasks per worker (of which duplicate deliveries, which did nothing): "
              + ", ".join(f"{name} {done} ({duplicates})"
                          for name, (done, duplicates) in tasks.items()))
    finally:
        for worker in workers:
            worker.stop()
        if problems:
            for worker in workers:
                print(f"--- {worker.name} log (end) ---\n{worker.log()[-3000:]}", file=sys.stderr)
        shutil.rmtree(folder, ignore_errors=True)
    if problems:
        sys.exit("FAILED:\n  " + "\n  ".join(problems))
    print(f"all {options.runs} runs succeeded, each with exactly one version of its own "
          f"({NAME}@1 to @{options.runs})")


if __name__ == "__main__":
    main()
