"""Django test setup (pytest-django) and real Celery worker processes for the registry tests.

With no environment the tests run on SQLite and the filesystem broker; with ``DATABASE_URL`` and
``CELERY_BROKER_URL`` set (as in CI) the same tests run on Postgres and Redis. Each test session
gets its own test database (suffixed with the process id), its own media folder and its own
queue name, so a running ``manage.py start`` or a second test session never takes its tasks.

The tests run in parallel (pytest-xdist, ``-n auto --dist loadgroup`` in pyproject.toml). Each
xdist worker is a test session of its own in the sense above (its own process id: its own test
database, media folder, broker folder, queue name and throttle counts), so a Celery worker
started by one never takes another's tasks. The tests of one module run on one xdist worker, so
a module fixture that is slow to build (the private Postgres cluster of test_postgres_faults.py,
a SeaweedFS server) is built once; the browser modules spread over the xdist workers (each
starts Chromium once: a second, where one worker running them all would finish last).
"""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import pytest

# Compiled modules (and pytest's rewritten test modules) are kept in __pycache__ even where the
# environment says PYTHONDONTWRITEBYTECODE: each xdist worker and each process a test starts
# would compile them again (pytest rewrites the asserts of every test module: seconds a worker).
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "registry.settings")
os.environ.setdefault("DEBUG", "1")  # as manage.py on a machine with no environment
SESSION = f"registry-test-{os.getpid()}"
# this session's own throttle counts, with rates no test reaches unless it lowers them
os.environ.setdefault("CACHE_KEY_PREFIX", SESSION)
for scope in ("WRITES", "UPLOADS", "ENCODE", "SIGNINS"):
    os.environ.setdefault(f"THROTTLE_{scope}", "100000/minute")

from django.conf import settings  # noqa: E402

settings.INSTALLED_APPS  # load the settings now, so that pytest-django sets Django up  # noqa: B018
# A password hashed as in production (PBKDF2, a million rounds) costs a quarter of a second of
# CPU; the tests' users are made by the hundred and no test is about the hash (API keys have a
# hash of their own), so the tests hash passwords the fast way (Django's advice for tests).
settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

REPO = Path(__file__).resolve().parent.parent
# The tests of one module run on one xdist worker (so its module fixtures are built once), and
# so do the tests of these folders (prefix: group) ...
XDIST_GROUPS: dict[str, str] = {}
# ... except the tests of these modules, which are long, independent and spread over the workers
XDIST_SPREAD = ("tests/registry/test_faults.py", "tests/registry/test_broker_restarts.py",
                "tests/test_bench.py")
# a Celery worker, a server or a cluster that a test starts keeps it waiting more than working:
# two xdist workers per core keep the cores busy (PYTEST_XDIST_AUTO_NUM_WORKERS=N to choose)
XDIST_WORKERS_PER_CORE = 2


def pytest_xdist_auto_num_workers(config):
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # pytest-xdist reads it
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return XDIST_WORKERS_PER_CORE * (cores or 1)


def xdist_group(nodeid: str) -> str | None:
    """``tests/bpe/test_batch.py::test_x[a]`` -> ``tests/bpe/test_batch.py``; a test of a spread
    module -> ``None`` (it runs wherever a worker is free)."""
    for prefix, group in XDIST_GROUPS.items():
        if nodeid.startswith(prefix):
            return group
    module = nodeid.split("::", 1)[0]
    return None if module in XDIST_SPREAD else module


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(items):
    """Long tests first (marked ``slow``), so that none of them starts last and the run does not
    wait for it alone; each test in its xdist group (``--dist loadgroup``)."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # a stable sort
    for item in items:
        group = xdist_group(item.nodeid)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


@pytest.fixture(scope="session")
def django_db_modify_db_settings(tmp_path_factory):
    """A test database of this session's own: a file for SQLite (so worker processes can open
    it), ``test_<name>_<pid>`` on Postgres."""
    from django.db import connections

    db = connections["default"].settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        db["TEST"]["NAME"] = str(tmp_path_factory.mktemp("db") / "test-registry.sqlite3")
    else:
        db["TEST"]["NAME"] = f"test_{db['NAME']}_{os.getpid()}"


@pytest.fixture(scope="session", autouse=True)
def registry_environment(tmp_path_factory):
    """This session's media folder, broker folder (filesystem broker) and queue name; returns
    the environment that worker processes need to share them."""
    from registry.celery import app

    media = tmp_path_factory.mktemp("media")
    settings.MEDIA_ROOT = str(media)
    env = {"MEDIA_ROOT": str(media), "CELERY_TASK_DEFAULT_QUEUE": SESSION,
           "DJANGO_SETTINGS_MODULE": "registry.settings"}
    # set in the settings too (here and below): Celery 5.6 reads its configuration from them
    # after this, and this process then sent its tasks to the queue "celery" in var/broker/
    settings.CELERY_TASK_DEFAULT_QUEUE = app.conf.task_default_queue = SESSION
    if app.conf.broker_url.startswith("filesystem"):
        broker = tmp_path_factory.mktemp("broker")
        options = dict(app.conf.broker_transport_options)
        for key, folder in [("data_folder_in", "messages"), ("data_folder_out", "messages"),
                            ("control_folder", "control"), ("processed_folder", "processed")]:
            (broker / folder).mkdir(exist_ok=True)
            options[key] = str(broker / folder)
        settings.CELERY_BROKER_TRANSPORT_OPTIONS = app.conf.broker_transport_options = options
        env["CELERY_BROKER_DIR"] = str(broker)
    return env


def database_env() -> dict:
    """Environment that points a worker process at the test database."""
    from django.db import connection

    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return {"SQLITE_PATH": str(db["NAME"])}
    credentials = quote(db["USER"] or "")
    if db["PASSWORD"]:
        credentials += ":" + quote(db["PASSWORD"])
    host = f"{credentials}@" if credentials else ""
    host += f"{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}"
    return {"DATABASE_URL": f"postgres://{host}/{db['NAME']}"}


class Worker:
    """A real ``celery -A registry worker`` process (solo pool) on this session's queue."""

    def __init__(self, name: str, env: dict, log_dir: Path):
        self.name, self.env, self.log_path = name, env, log_dir / f"{name}.log"
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = 60) -> "Worker":
        # TEST_WORKER_POOL=prefork: child processes, as `manage.py start` and compose run it
        pool = self.env.get("TEST_WORKER_POOL", "solo")
        command = [sys.executable, "-m", "celery", "-A", "registry", "worker", f"--pool={pool}",
                   *(["--concurrency=2"] if pool == "prefork" else []),
                   "--loglevel=INFO", "-Q", SESSION, "-n", f"{self.name}-{SESSION}@%h",
                   "--without-gossip", "--without-mingle", "--without-heartbeat",
                   "--include", ",".join(["tests.registry.worker_barrier",
                                          *filter(None, [self.env.get("TEST_WORKER_INCLUDE")])])]
        log = open(self.log_path, "ab")
        self.process = subprocess.Popen(command, cwd=REPO, env={**os.environ, **self.env},
                                        stdout=log, stderr=subprocess.STDOUT,
                                        start_new_session=True)
        deadline = time.monotonic() + timeout
        while b" ready." not in self.log_path.read_bytes():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"worker {self.name} did not start:\n{self.log()}")
            time.sleep(0.1)
        return self

    def kill(self) -> None:
        """SIGKILL the worker, as an out-of-memory killer would."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-5000:]


@pytest.fixture(scope="session")
def start_worker(django_db_setup, django_db_blocker, registry_environment, tmp_path_factory):
    """A function that starts a worker process (stopped at the end of the session)."""
    log_dir = tmp_path_factory.mktemp("workers")
    workers = []

    def start(name: str = "worker", **env) -> Worker:
        with django_db_blocker.unblock():
            db_env = database_env()
        worker = Worker(name, {**registry_environment, **db_env, **env}, log_dir)
        workers.append(worker)
        return worker.start()

    yield start
    for worker in workers:
        worker.stop()
    delete_session_queue()


def delete_session_queue() -> None:
    """Drop this session's queue and its binding from the broker (messages and all)."""
    from registry.celery import app

    with app.connection_for_write() as connection:
        queue = app.amqp.queues[SESSION].bind(connection.default_channel)
        queue.declare()  # the channel deletes only the bindings it knows
        queue.delete()


@pytest.fixture(scope="session")
def session_worker(start_worker):
    """One worker shared by the tests that need a worker (restarted if a test killed it)."""
    box = {"worker": start_worker("main")}
    yield box


@pytest.fixture
def worker(session_worker, start_worker, transactional_db) -> Worker:
    """A running worker; the test's rows are committed (transactional_db) so it sees them."""
    if session_worker["worker"].process.poll() is not None:
        session_worker["worker"] = start_worker("main")
    return session_worker["worker"]


@pytest.fixture
def registry_data(db, settings, tmp_path):
    """A small registry: see ``tests.registry.helpers.build_registry_data``."""
    from tests.registry.helpers import build_registry_data

    return build_registry_data(settings, tmp_path)
