"""The deployment files as they are run: the compose file checked by ``docker-compose config``
(no daemon needed), and the web service started by gunicorn with the Dockerfile's own ``ENV``
and ``CMD``, serving a page and a static file through whitenoise."""

import http.cookiejar
import json
import os
import re
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent
DOCKERFILE = (REPO / "Dockerfile").read_text()


def need(program: str, install: str) -> str:
    found = shutil.which(program) or shutil.which(program, path=str(Path(sys.executable).parent))
    if found is None:
        if os.environ.get("CI"):
            pytest.fail(f"{program} is missing: .ci/run installs it ({install})")
        pytest.skip(f"{program} is not installed ({install})")
    return found


def dockerfile_cmd() -> list[str]:
    [cmd] = re.findall(r"^CMD (\[.*\])$", DOCKERFILE, re.M)
    return json.loads(cmd)


def dockerfile_env() -> dict[str, str]:
    env = {}
    for line in re.findall(r"^ENV (.*)$", DOCKERFILE, re.M):
        env.update(part.split("=", 1) for part in shlex.split(line))
    return env


def compose_config(env: dict) -> subprocess.CompletedProcess:
    compose = need("docker-compose", "apt-get install docker-compose")
    return subprocess.run([compose, "-f", str(REPO / "docker-compose.yml"), "config"], cwd=REPO,
                          capture_output=True, text=True, env=env, timeout=60)


def test_the_compose_file_is_valid_and_runs_the_web_service_as_the_dockerfile_does():
    clean = {k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "HTTPS")}
    result = compose_config({**clean, "SECRET_KEY": secrets.token_urlsafe(50)})
    assert result.returncode == 0, result.stderr
    config = yaml.safe_load(result.stdout)
    assert set(config["services"]) == {"db", "redis", "web", "worker", "beat"}
    web = config["services"]["web"]
    command = " ".join(web["command"]) if isinstance(web["command"], list) else web["command"]
    assert " ".join(dockerfile_cmd()).replace("0.0.0.0:8000", "") in command.replace(
        "0.0.0.0:8000", "")
    for name in ("web", "worker", "beat"):
        environment = config["services"][name]["environment"]
        assert environment["DEBUG"] == "0" and environment["HTTPS"] == "0"
        assert environment["DATABASE_URL"].startswith("postgres://")
        assert set(config["services"][name]["depends_on"]) == {"db", "redis"}


def test_the_compose_file_refuses_to_start_without_a_secret_key_of_the_users():
    clean = {k: v for k, v in os.environ.items() if k != "SECRET_KEY"}
    result = compose_config(clean)
    assert result.returncode != 0
    assert "set SECRET_KEY to a long random string" in result.stderr


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def fetch(url: str, **headers) -> tuple[int, dict, bytes]:
    request = urllib.request.Request(url, headers=headers)
    with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310 - loopback
        return answer.status, dict(answer.headers), answer.read()


@contextmanager
def served_as_the_dockerfile_does(tmp_path):
    """gunicorn started by the Dockerfile's ``CMD`` with its ``ENV`` (DEBUG off) on a free
    loopback port, after ``collectstatic`` and ``migrate``; yields the base URL."""
    gunicorn = need("gunicorn", "pip install -e '.[test]'")
    port = free_port()
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "DEBUG", "SQLITE_PATH")}
    env.update(dockerfile_env())
    env.update(STATIC_ROOT=str(tmp_path / "static"), MEDIA_ROOT=str(tmp_path / "media"),
               REGISTRY_VAR_DIR=str(tmp_path / "var"), SECRET_KEY=secrets.token_urlsafe(50),
               HTTPS="0", ALLOWED_HOSTS="127.0.0.1", PYTHONPATH=str(REPO))
    assert env["DEBUG"] == "0"
    for step in (["collectstatic", "--noinput", "--verbosity", "0"], ["migrate", "-v", "0"]):
        subprocess.run([sys.executable, "manage.py", *step], cwd=REPO, env=env, check=True,
                       timeout=180)
    command = [gunicorn if part == "gunicorn" else part for part in dockerfile_cmd()]
    command[command.index("--bind") + 1] = f"127.0.0.1:{port}"
    server = subprocess.Popen(command, cwd=REPO, env=env, start_new_session=True,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(300):
            try:
                fetch(base + "/health")
                break
            except OSError:
                assert server.poll() is None, server.stderr.read().decode()
                time.sleep(0.1)
        yield base
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


@pytest.mark.slow
def test_gunicorn_started_as_the_dockerfile_does_serves_a_page_and_a_static_file(tmp_path):
    with served_as_the_dockerfile_does(tmp_path) as base:
        status, _, page = fetch(base + "/")
        assert status == 200
        assert b"<title>" in page
        [static] = re.findall(rb'href="(/static/[^"]+\.css)"', page)[:1]
        assert re.search(rb"\.[0-9a-f]{12}\.css$", static), static  # hashed by collectstatic
        status, headers, body = fetch(base + static.decode(), **{"Accept-Encoding": "gzip"})
        assert status == 200 and body
        assert headers.get("Content-Encoding") == "gzip"
        assert "immutable" in headers.get("Cache-Control", "")
        assert json.loads(fetch(base + "/health")[2])["status"] == "ok"


@pytest.mark.slow
def test_a_playground_text_of_20000_characters_works_under_gunicorn(tmp_path):
    """The README's promise: the form POSTs its text (a GET of 500 CJK characters, 4.5 KB of
    request line, got gunicorn's 414)."""
    text = "字" * 20_000
    with served_as_the_dockerfile_does(tmp_path) as base:
        cookies = http.cookiejar.CookieJar()
        browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(cookies))
        form = browser.open(base + "/playground/", timeout=30).read().decode()
        [token] = re.findall(r'name="csrfmiddlewaretoken" value="([^"]+)"', form)
        body = urllib.parse.urlencode({"csrfmiddlewaretoken": token, "text": text}).encode()
        request = urllib.request.Request(base + "/playground/", data=body,
                                         headers={"Referer": base + "/playground/"})
        with browser.open(request, timeout=110) as answer:
            assert answer.status == 200
            shown = answer.read().decode()
    assert len(body) > 150_000  # what no request line holds
    assert f'data-count="{len(text)}"' in shown  # the characters baseline: every character
    assert f'data-count="{len(text.encode())}"' in shown and "encodes at most" not in shown
