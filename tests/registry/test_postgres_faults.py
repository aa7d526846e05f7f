"""Postgres restarted while the registry works: during training, during a corpus upload and
during an evaluation. Each either completes or fails in words; there is never a version without
all its rows, nor a corpus row without its file; a corpus file without its row (the database went
away between the move and the INSERT) is removed by the periodic sweep, its documented recovery.

These tests never touch the shared Postgres: a session fixture starts a cluster of its own (as
the ``postgres`` user, on a free port, trust authentication), migrates a template database once,
and each test gets a database copied from it. The scenario runs outside the test session's own
database: a real Celery worker, ``manage.py`` commands and the test's own SQL all point at the
private cluster, with a filesystem broker and a media folder of the test's own. A restart is
``pg_ctl stop -m fast`` (which ends every connection, rolling back its transaction) and a start.
The restart of the upload is pinned between the file's move and its INSERT: the test holds a
table lock the INSERT waits on, and restarts once ``pg_stat_activity`` shows it waiting.
"""

import glob
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import psycopg
import pytest

from tests.conftest import REPO, SESSION, Worker

from .helpers import made_up_words, wait_until
from .test_faults import free_port

pytestmark = pytest.mark.slow

DATABASES = itertools.count(1)
# what a worker or command logs when Postgres ended its connection
LOST = ("terminating connection due to administrator command",
        "server closed the connection unexpectedly", "the connection is closed",
        "consuming input failed", "connection failed")


def postgres_tools() -> tuple[Path, list[str]]:
    """The folder of ``initdb`` and ``pg_ctl``, and the command prefix that runs one as the
    ``postgres`` user (Postgres refuses to run as root)."""
    folders = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda f: int(f.split("/")[4]))
    runuser, su = shutil.which("runuser"), shutil.which("su")
    problem = ""
    if not folders:
        problem = "no Postgres server under /usr/lib/postgresql/*/bin (apt-get install postgresql)"
    elif not (runuser or su):
        problem = "neither runuser nor su, to run Postgres as the postgres user"
    elif not any(line.startswith("postgres:") for line in open("/etc/passwd")):
        problem = "no postgres user to run Postgres as"
    if problem:
        if os.environ.get("CI") == "true":
            pytest.fail(problem)
        pytest.skip(problem)
    return Path(folders[-1]), ([runuser, "-u", "postgres", "--"] if runuser
                               else [su, "postgres", "-s", "/bin/sh", "-c"])


class PrivatePostgres:
    """A Postgres cluster of the test session's own, in a folder of its own."""

    def __init__(self):
        self.bin, self.as_postgres = postgres_tools()
        self.folder = Path(tempfile.mkdtemp(prefix="registry-pg-"))
        shutil.chown(self.folder, "postgres", "postgres")
        self.data, self.port = self.folder / "data", free_port()

    def run(self, tool: str, *args: str) -> str:
        command = [str(self.bin / tool), *args]
        if self.as_postgres[0].endswith("su"):  # su takes one shell command line
            command = [" ".join(f"'{part}'" for part in command)]
        done = subprocess.run(self.as_postgres + command, capture_output=True, text=True,
                              cwd=self.folder, timeout=60)
        assert done.returncode == 0, f"{tool} {args} failed:\n{done.stdout}{done.stderr}"
        return done.stdout

    def start(self) -> None:
        options = (f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 "
                   f"-c fsync=off -c max_connections=50")
        self.run("pg_ctl", "start", "-w", "-D", str(self.data), "-l",
                 str(self.folder / "postgres.log"), "-o", options)

    def restart(self) -> None:
        """Fast shutdown (every session ends at once, its transaction rolled back), then start
        (``pg_ctl restart`` would leave the server writing to this process's pipes)."""
        self.run("pg_ctl", "stop", "-w", "-m", "fast", "-D", str(self.data))
        self.start()

    def url(self, database: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def sql(self, database: str, query: str, *params) -> list[tuple]:
        with psycopg.connect(self.url(database), autocommit=True) as connection:
            cursor = connection.execute(query, params or None)
            return cursor.fetchall() if cursor.description else []


@pytest.fixture(scope="session")
def private_postgres(tmp_path_factory):
    """The cluster, with a ``registry_template`` database migrated once (each test copies it)."""
    postgres = PrivatePostgres()
    try:
        postgres.run("initdb", "-D", str(postgres.data), "-A", "trust", "-U", "postgres",
                     "--no-sync")
        postgres.start()
        postgres.sql("postgres", "CREATE DATABASE registry_template")
        env = registry_env(postgres, "registry_template", tmp_path_factory.mktemp("template"))
        manage(env, "migrate", "--no-input")
        yield postgres
    finally:
        try:
            if (postgres.data / "postmaster.pid").exists():
                postgres.run("pg_ctl", "stop", "-m", "immediate", "-D", str(postgres.data))
        finally:
            shutil.rmtree(postgres.folder, ignore_errors=True)


def registry_env(postgres: PrivatePostgres, database: str, folder: Path) -> dict:
    """What the worker and the commands need to use the private cluster and the test's folder
    (the filesystem broker: never the session's broker)."""
    return {"DATABASE_URL": postgres.url(database), "REGISTRY_VAR_DIR": str(folder / "var"),
            "MEDIA_ROOT": str(folder / "media"), "CELERY_BROKER_DIR": str(folder / "broker"),
            "CELERY_BROKER_URL": "filesystem://localhost//", "CACHE_URL": "",
            "CELERY_TASK_DEFAULT_QUEUE": SESSION, "DEBUG": "1"}


def manage(env: dict, *args: str) -> subprocess.CompletedProcess:
    """``manage.py ARGS`` with ``env``, which must succeed."""
    done = subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, env={**os.environ,
                          **env}, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"manage.py {args} failed:\n{done.stdout}{done.stderr}"
    return done


class Registry:
    """One test's registry: a database copied from the template, its media folder, its
    workers; ``sql`` reads (and locks) rows as any client of the cluster would."""

    def __init__(self, postgres: PrivatePostgres, folder: Path):
        self.postgres, self.folder = postgres, folder
        self.database = f"registry_{os.getpid()}_{next(DATABASES)}"
        postgres.sql("postgres", f"CREATE DATABASE {self.database} TEMPLATE registry_template")
        self.env = registry_env(postgres, self.database, folder)
        self.workers: list[Worker] = []

    def manage(self, *args: str, **env) -> subprocess.CompletedProcess:
        return manage({**self.env, **env}, *args)

    def sql(self, query: str, *params) -> list[tuple]:
        return self.postgres.sql(self.database, query, *params)

    def start_worker(self, name: str, **env) -> Worker:
        self.workers.append(Worker(f"pg-{name}-{self.database}", {**self.env, **env},
                                   self.folder))
        return self.workers[-1].start()

    def import_corpus(self, text: str, name: str, *flags: str) -> None:
        path = self.folder / f"{name}.txt"
        path.write_text(text)
        self.manage("import_corpus", str(path), "--name", name, *flags)

    def corpus_files(self) -> list[str]:
        folder = Path(self.env["MEDIA_ROOT"]) / "corpora"
        return sorted(p.name for p in folder.glob("*.txt"))

    def verify(self) -> str:
        """``manage.py verify`` (exit 0: every version's rows and every corpus file as
        recorded); its summary line."""
        return self.manage("verify").stdout.strip().splitlines()[-1]

    def close(self) -> None:
        for worker in self.workers:
            worker.stop()
        self.postgres.sql("postgres", f"DROP DATABASE IF EXISTS {self.database} WITH (FORCE)")


@pytest.fixture
def registry(private_postgres, tmp_path):
    registry = Registry(private_postgres, tmp_path)
    yield registry
    registry.close()


def wait_for(predicate, timeout: float, message: str, worker: Worker):
    try:
        return wait_until(predicate, timeout, message, interval=0.1)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n--- worker log ---\n{worker.log()}") from None


def full_log(worker: Worker) -> str:
    return worker.log_path.read_text(errors="replace")


def lost_connection(worker: Worker) -> bool:
    return any(sign in full_log(worker) for sign in LOST)


def waiting_on_a_lock(registry: Registry, statement: str) -> bool:
    """A session of the registry's database waits on a lock in ``statement``."""
    return bool(registry.sql("SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                             "AND datname = %s AND starts_with(query, %s)", registry.database,
                             statement))


def run_row(registry: Registry) -> dict:
    [row] = registry.sql("SELECT row_to_json(r)::text FROM tokenizers_app_trainingrun r")
    return json.loads(row[0])


def assert_versions_complete(registry: Registry, run_id: int) -> int:
    """Every version has its merge and vocab rows, and all belong to the run; the count."""
    versions = registry.sql(
        "SELECT v.id, v.status, v.merge_count, v.vocab_size, "
        "(SELECT count(*) FROM tokenizers_app_mergerule m WHERE m.version_id = v.id), "
        "(SELECT count(*) FROM tokenizers_app_vocabentry e WHERE e.version_id = v.id), "
        "(SELECT array_agg(trainingrun_id) FROM tokenizers_app_trainingrun_versions t "
        " WHERE t.tokenizerversion_id = v.id) FROM tokenizers_app_tokenizerversion v")
    for _, status, merges, vocab, merge_rows, vocab_rows, runs in versions:
        assert (status, merge_rows, vocab_rows, runs) == ("ready", merges, vocab, [run_id])
    orphans = registry.sql("SELECT (SELECT count(*) FROM tokenizers_app_mergerule WHERE "
                           "version_id NOT IN (SELECT id FROM tokenizers_app_tokenizerversion)) "
                           "+ (SELECT count(*) FROM tokenizers_app_vocabentry WHERE version_id "
                           "NOT IN (SELECT id FROM tokenizers_app_tokenizerversion))")
    assert orphans == [(0,)]
    return len(versions)


# -- training -------------------------------------------------------------------------------------

def test_postgres_restarted_while_a_worker_merges_leaves_one_complete_version_or_a_reason(
        registry):
    """The worker's next progress write finds its connection gone: the attempt ends (saving
    nothing), the reaper queues the run again and the worker trains it anew; or the run fails
    saying why. Never a version without all its rows."""
    registry.import_corpus(made_up_words(300_000), "restart")
    # the worker stops in the merge stage, writing its progress until a write fails (see
    # worker_barrier): however fast the merge loop, the run is merging when Postgres restarts
    worker = registry.start_worker("train", TEST_HOLD_STAGE="merge")
    registry.manage("train", "--corpus", "restart", "--tokenizer", "restart",
                    "--vocab-size", "3000")

    def merging():
        run = run_row(registry)
        assert run["status"] in ("queued", "running"), f"the run ended before the restart: {run}"
        return run["stage"] == "merge" and run["merges_per_second"]

    wait_for(merging, 60, "the run to learn merges", worker)
    registry.postgres.restart()
    run = run_row(registry)
    assert (run["status"], run["stage"], run["attempt"]) == ("running", "merge", 1)
    wait_for(lambda: lost_connection(worker), 30, "the worker to lose its connection",
             worker)

    wait_for(lambda: re.search(r"execute_training_run\[[-\w]+\] (raised|succeeded)",
                               full_log(worker)), 30, "the attempt to end", worker)
    if run_row(registry)["status"] == "running":  # the attempt could not record its end
        wait_for(lambda: "requeued: runs" in registry.manage(
            "reap_runs", "--stale-seconds", "1").stdout, 30, "the reaper to queue it", worker)
    wait_for(lambda: run_row(registry)["status"] not in ("queued", "running"), 50,
             "the run to end", worker)
    run = run_row(registry)
    versions = assert_versions_complete(registry, run["id"])
    if run["status"] == "succeeded":
        assert (versions, run["error"]) == (1, "")
    else:
        assert (run["status"], versions) == ("failed", 0) and run["error"]
    assert registry.verify() == f"checked {versions} versions and 1 corpora: all as recorded"


# -- an upload ------------------------------------------------------------------------------------

def test_postgres_restarted_between_the_corpus_file_move_and_its_insert(registry):
    """The import has moved the file into place and waits on its INSERT (held by a lock the test
    takes) when Postgres restarts: the command fails in words and no row is left, the file (kept
    when the database could not say whether a row holds it) going with the sweep; or, should the
    INSERT get through as the lock goes, the corpus is stored with its file."""
    path = registry.folder / "upload.txt"
    path.write_text(made_up_words(3_000_000, seed=2))
    lock = psycopg.connect(registry.postgres.url(registry.database))  # gone with the restart
    lock.execute("LOCK TABLE tokenizers_app_corpus IN SHARE ROW EXCLUSIVE MODE")  # no INSERT
    command = subprocess.Popen(
        [sys.executable, "manage.py", "import_corpus", str(path), "--name", "upload"],
        cwd=REPO, env={**os.environ, **registry.env}, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    try:
        wait_until(lambda: waiting_on_a_lock(registry, 'INSERT INTO "tokenizers_app_corpus"'),
                   60, "the import to wait on its INSERT")
        assert len(registry.corpus_files()) == 1  # moved into place, no row yet
        registry.postgres.restart()
        _, stderr = command.communicate(timeout=30)
    finally:
        command.kill()
        lock.close()
    rows = [name for (name,) in registry.sql("SELECT object_name FROM tokenizers_app_corpus")]
    if command.returncode:  # the INSERT died with its session (nearly always)
        assert "Traceback" not in stderr and stderr.splitlines()[-1].startswith(
            "CommandError: the database did not answer ("), stderr
    else:  # it committed as the lock was released, before its session ended
        assert rows == [f"corpora/{registry.corpus_files()[0]}"], stderr

    registry.manage("sweep", "--min-age-seconds", "0")  # removes a file that no row holds
    assert [f"corpora/{name}" for name in registry.corpus_files()] == rows
    assert registry.verify() == f"checked 0 versions and {len(rows)} corpora: all as recorded"
    registry.import_corpus(made_up_words(3_000_000, seed=2), "upload")  # stored, or already
    assert registry.verify() == "checked 0 versions and 1 corpora: all as recorded"


# -- an evaluation --------------------------------------------------------------------------------

def test_postgres_restarted_while_a_worker_evaluates_gives_one_evaluation(registry):
    """The evaluation's worker finds its connection gone when it writes its result: the
    evaluation stays running until the reaper queues it again (its task ended, and its heartbeat
    with it), then a worker computes it: exactly one evaluation, succeeded (or failed saying why)."""
    registry.import_corpus(made_up_words(3_000_000, seed=1), "held-out", "--evaluation")
    registry.import_corpus(made_up_words(20_000), "prose")
    # held once running, before it reads the corpus (``worker_barrier``): an evaluation of
    # 3 MB takes well under a second now, so the restart would otherwise come after it ended
    release = Path(registry.folder) / "evaluation-release"
    worker = registry.start_worker("evaluate", TEST_HOLD_STAGE="evaluate",
                                   TEST_HOLD_RELEASE=str(release))
    registry.manage("train", "--corpus", "prose", "--tokenizer", "evaluated",
                    "--vocab-size", "300", "--wait")
    evaluation = "SELECT status, error, compression_ratio FROM tokenizers_app_evaluation"

    def running():
        [(status, error, _)] = registry.sql(evaluation) or [("queued", "", None)]
        assert status in ("queued", "running"), f"evaluation ended: {status} {error}"
        return status == "running"

    wait_for(running, 60, "the evaluation to run", worker)
    registry.postgres.restart()  # while it is held: its connection waits, idle
    release.touch()
    wait_for(lambda: lost_connection(worker), 30, "the worker to lose its connection",
             worker)
    assert registry.sql(evaluation)[0][0] == "running"  # its result was not written

    wait_for(lambda: "sent again: evaluations" in registry.manage(
        "reap_runs", EVALUATION_STALE_SECONDS="1").stdout, 30, "the reaper to queue it", worker)
    wait_for(lambda: registry.sql(evaluation)[0][0] not in ("queued", "running"), 50,
             "the evaluation to end", worker)
    [(status, error, ratio)] = registry.sql(evaluation)
    assert (status, error) == ("succeeded", "") and ratio > 1 or (status == "failed" and error)
    assert registry.verify() == "checked 1 versions and 2 corpora: all as recorded"
