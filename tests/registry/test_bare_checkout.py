"""A bare checkout (no environment at all) runs the README's commands: ``celery -A registry
worker`` beside ``manage.py``, with DEBUG on there and nowhere else."""

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from registry.bare_checkout import debug_off_for_start, debug_on_a_bare_checkout

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
GOOD_KEY = "k3y-of-this-deployment-" + "Qx7_" * 10
# what the `celery` command does first: load its CLI, then the app named by -A
SHOW_DEBUG = ("import celery.bin.celery, registry.celery; from django.conf import settings; "
              "print(settings.DEBUG, settings.SECRET_KEY == settings.DEVELOPMENT_KEY)")


def test_the_rule_turns_debug_on_only_when_neither_debug_nor_a_key_is_set():
    bare, deployed, asked = {}, {"SECRET_KEY": GOOD_KEY}, {"DEBUG": "0"}

    assert debug_on_a_bare_checkout(bare) and bare == {"DEBUG": "1"}
    assert not debug_on_a_bare_checkout(deployed) and deployed == {"SECRET_KEY": GOOD_KEY}
    assert not debug_on_a_bare_checkout(asked) and asked == {"DEBUG": "0"}


def test_start_on_a_bare_checkout_runs_with_debug_off_and_a_key_of_its_own(tmp_path):
    first, again, deployed = {}, {}, {"SECRET_KEY": GOOD_KEY}

    assert debug_off_for_start(tmp_path / "var", first) and first["DEBUG"] == "0"
    assert len(first["SECRET_KEY"]) >= 50 and first["SECRET_KEY"] != GOOD_KEY
    assert (tmp_path / "var" / "secret-key").stat().st_mode & 0o077 == 0  # its owner's only
    assert debug_off_for_start(tmp_path / "var", again) and again == first  # kept, not remade
    assert not debug_off_for_start(tmp_path / "var", deployed) and deployed == {
        "SECRET_KEY": GOOD_KEY}
    asked = {"DEBUG": "1"}
    assert not debug_off_for_start(tmp_path / "var", asked) and asked == {"DEBUG": "1"}


def bare_environment(**env) -> dict:
    """No variable but the ones a login shell always has, and the ones given."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/"),
            **env}


def celery_settings(tmp_path, **env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", SHOW_DEBUG], cwd=REPO, capture_output=True,
                          text=True,
                          env=bare_environment(REGISTRY_VAR_DIR=str(tmp_path), **env))


def test_the_celery_command_uses_the_development_key_on_a_bare_machine_only(tmp_path):
    assert celery_settings(tmp_path).stdout.split() == ["True", "True"]
    assert celery_settings(tmp_path, SECRET_KEY=GOOD_KEY).stdout.split() == ["False", "False"]
    refused = celery_settings(tmp_path, DEBUG="0")  # a deployment that forgot its key
    assert refused.returncode != 0 and "SECRET_KEY is not set" in refused.stderr
    # gunicorn's entry never turns DEBUG on: test_settings.py, test_debug_is_off_unless_asked...


def copy_of_the_tree(target: Path) -> Path:
    """The checkout as a fresh clone has it: no var/, no venv, no caches."""
    shutil.copytree(REPO, target, ignore=shutil.ignore_patterns(
        ".git", ".venv", "var", "__pycache__", "*.egg-info", ".pytest_cache", ".hypothesis",
        "test-artifacts"))
    return target


@pytest.mark.slow
def test_a_bare_checkout_runs_a_celery_worker_that_trains_what_manage_py_starts(tmp_path):
    tree = copy_of_the_tree(tmp_path / "checkout")
    env = bare_environment()

    def manage(*args, timeout=120):
        result = subprocess.run([sys.executable, "manage.py", *args], cwd=tree, env=env,
                                capture_output=True, text=True, timeout=timeout)
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout

    manage("migrate", "--noinput")
    manage("import_corpus", "README.md", "--name", "readme")
    log = open(tmp_path / "worker.log", "wb")
    worker = subprocess.Popen([BIN / "celery", "-A", "registry", "worker"], cwd=tree, env=env,
                              stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        # the worker is the only process that runs tasks here: the run succeeds through it
        trained = manage("train", "--corpus", "readme", "--tokenizer", "readme-bpe",
                         "--vocab-size", "300", "--wait")
        assert worker.poll() is None, "the worker stopped"
    finally:
        worker.send_signal(signal.SIGTERM)  # a warm shutdown, as Ctrl-C
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()
    worker_log = (tmp_path / "worker.log").read_text(errors="replace")
    assert "version readme-bpe@1: vocab size 300" in trained, worker_log[-3000:]
    assert "ImproperlyConfigured" not in worker_log and "Traceback" not in worker_log
    assert worker.returncode == 0, worker_log[-3000:]  # it ran until told to stop
    assert (tree / "var" / "registry.sqlite3").is_file()  # the checkout's own default database
