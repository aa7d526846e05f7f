"""``manage.py start`` keeps its worker: a worker whose process exits (killed here with SIGKILL,
as an out-of-memory killer would; a main process that meets an unrecoverable error exits the
same way) is started again, and the next run is trained without anyone restarting anything.
The compose file does the same with ``restart: unless-stopped`` (tests/test_deployment.py)."""

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.processes import free_port, stop_group, wait_for_health

from .helpers import sample_text, wait_until

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def worker_pids(start: subprocess.Popen) -> list[int]:
    """The worker processes ``start`` runs (its children running celery)."""
    found = subprocess.run(["pgrep", "-P", str(start.pid), "-f", "celery -A registry worker"],
                           capture_output=True, text=True)
    return [int(pid) for pid in found.stdout.split()]


def test_start_starts_its_worker_again_when_it_exits_and_the_next_run_is_trained(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "MEDIA_ROOT", "SQLITE_PATH",
                        "CELERY_BROKER_DIR", "CELERY_TASK_DEFAULT_QUEUE", "CACHE_URL")}
    env.update(REGISTRY_VAR_DIR=str(tmp_path / "var"), DEBUG="1")
    port, log_path = free_port(), tmp_path / "start.log"

    def output() -> str:
        return log_path.read_text(errors="replace")[-4000:]

    def manage(*args) -> str:
        done = subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, f"{args}: {done.stdout}{done.stderr}\n{output()}"
        return done.stdout

    with open(log_path, "wb") as log:
        start = subprocess.Popen([sys.executable, "manage.py", "start", f"127.0.0.1:{port}",
                                  "--no-demo", "--concurrency", "1"], cwd=REPO, env=env,
                                 stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_for_health(f"http://127.0.0.1:{port}", start, 120, output)
        [first] = wait_until(lambda: worker_pids(start), 30, "the worker to start")
        wait_until(lambda: " ready." in output(), 60, f"the worker to be ready:\n{output()}")

        os.kill(first, signal.SIGKILL)
        wait_until(lambda: "the worker exited (status -9): starting it again" in output(), 30,
                   f"start to notice the worker's exit:\n{output()}")
        [second] = wait_until(lambda: [pid for pid in worker_pids(start) if pid != first], 30,
                              f"a new worker:\n{output()}")
        assert start.poll() is None and worker_pids(start) == [second]

        (tmp_path / "prose.txt").write_text(sample_text(20_000), encoding="utf-8")
        manage("import_corpus", str(tmp_path / "prose.txt"), "--name", "prose")
        trained = manage("train", "--corpus", "prose", "--tokenizer", "after-exit",
                         "--vocab-size", "300", "--wait")
        assert "version after-exit@1: vocab size 300" in trained, trained
        assert start.poll() is None and worker_pids(start) == [second]
    finally:
        stop_group(start)
    assert log_path.read_text(errors="replace").count("starting a worker: ") == 2
