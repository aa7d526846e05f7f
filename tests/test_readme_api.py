"""The README's HTTP API examples run as written against ``manage.py start``.

Its ``shell`` blocks (curl, then the same reads and writes as commands) and its ``py`` block (fetch
``readme-bpe@production`` and load it in ``tokenizers``) run in order against a fresh
``manage.py start --no-demo`` on a free port (the embedded default: SQLite and the broker in
files, in a temporary folder), with the README's ``http://127.0.0.1:8000`` pointed at that port
and ``.venv/bin/python`` at this test's Python.
"""

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.processes import free_port, stop_group, wait_for_health
REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text(encoding="utf-8")
SERVER_ENV = ("DATABASE_URL", "CELERY_BROKER_URL", "MEDIA_ROOT", "SQLITE_PATH",
              "CELERY_BROKER_DIR", "CELERY_TASK_DEFAULT_QUEUE", "REGISTRY_VAR_DIR")

LEFTOVERS = ("headers.txt", "tokenizer.json", "readme-bpe-transformers.zip")


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, re.S)



@pytest.mark.slow
def test_the_readme_api_examples_run_against_manage_py_start(tmp_path):
    if shutil.which("curl") is None:
        if os.environ.get("CI"):
            pytest.fail("curl is missing: .ci/run installs it")
        pytest.skip("curl is not installed (apt-get install curl)")
    shell_blocks, python_blocks = _blocks("shell"), _blocks("py")
    assert len(shell_blocks) == 2 and len(python_blocks) == 1
    port = free_port()
    env = {key: value for key, value in os.environ.items() if key not in SERVER_ENV}
    env["REGISTRY_VAR_DIR"] = str(tmp_path / "var")
    log_path = tmp_path / "start.log"
    with open(log_path, "wb") as log:
        server = subprocess.Popen(
            [sys.executable, "manage.py", "start", f"127.0.0.1:{port}", "--no-demo"], cwd=REPO,
            env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def fail(message: str):
        pytest.fail(f"{message}\n--- manage.py start:\n"
                    f"{log_path.read_text(errors='replace')[-4000:]}")

    try:
        wait_for_health(f"http://127.0.0.1:{port}", server, 90,
                        lambda: log_path.read_text(errors="replace")[-4000:])
        outputs = []
        for block in shell_blocks:
            block = (block.replace("http://127.0.0.1:8000", f"http://127.0.0.1:{port}")
                     .replace(".venv/bin/python", shlex.quote(sys.executable)))
            try:
                done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block], cwd=REPO,
                                      env=env, capture_output=True, text=True, timeout=240)
            except subprocess.TimeoutExpired:
                fail(f"README block timed out:\n{block}")
            if done.returncode:
                fail(f"README block failed:\n{block}\n--- stdout:\n{done.stdout[-3000:]}\n"
                     f"--- stderr:\n{done.stderr[-3000:]}")
            outputs.append(done.stdout)
        curl, commands = outputs
        assert "304\n" in curl and '"status": "succeeded"' in curl
        assert '"versions": ["readme-bpe@1"]' in curl and "readme-copy" in curl
        assert "readme-bpe@1" in commands and "production" in commands
        code = python_blocks[0].replace("http://127.0.0.1:8000", f"http://127.0.0.1:{port}")
        loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                timeout=60)
        assert loaded.returncode == 0, loaded.stderr
        assert re.fullmatch(r"\[\d+(, \d+)*\]\n", loaded.stdout), loaded.stdout
    finally:
        for leftover in LEFTOVERS:  # what the curl block writes, had it stopped half-way
            (REPO / leftover).unlink(missing_ok=True)
        stop_group(server, 30)
