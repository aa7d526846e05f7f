"""The deployment files as they are run: the compose file checked by ``docker-compose config``
(no daemon needed), and the web service started by gunicorn with the Dockerfile's own ``ENV``
and ``CMD``, serving a page and a static file through whitenoise."""

import atexit
import concurrent.futures
import contextlib
import http.cookiejar
import json
import os
import re
import secrets
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests.processes import free_port, stop_group, wait_for_health
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
    assert set(config["services"]) == {"db", "redis", "s3", "web", "worker", "beat", "front"}
    front = config["services"]["front"]  # nginx in front of gunicorn, with deploy/front.conf
    assert any("deploy/front.conf" in str(v) for v in front["volumes"])
    assert "ports" not in config["services"]["web"]
    assert config["services"]["web"]["environment"]["TRUST_X_FORWARDED_FOR"] == "1"
    web = config["services"]["web"]
    command = " ".join(web["command"]) if isinstance(web["command"], list) else web["command"]
    assert " ".join(dockerfile_cmd()).replace("0.0.0.0:8000", "") in command.replace(
        "0.0.0.0:8000", "")
    for name in ("web", "worker", "beat"):
        environment = config["services"][name]["environment"]
        assert environment["DEBUG"] == "0" and environment["HTTPS"] == "0"
        assert environment["DATABASE_URL"].startswith("postgres://")
        assert set(config["services"][name]["depends_on"]) == {"db", "redis", "s3"}
        # the files are in the bucket: no volume shared between web and workers
        assert environment["STORAGE_URL"].startswith("s3://")
        assert environment["AWS_ENDPOINT_URL"] == "http://s3:8333"
        assert not config["services"][name].get("volumes")
        # a worker whose process exits (an unrecoverable error, killed) is started again
        assert config["services"][name]["restart"] == "unless-stopped"


def test_the_compose_file_refuses_to_start_without_a_secret_key_of_the_users():
    clean = {k: v for k, v in os.environ.items() if k != "SECRET_KEY"}
    result = compose_config(clean)
    assert result.returncode != 0
    assert "set SECRET_KEY to a long random string" in result.stderr



def fetch(url: str, **headers) -> tuple[int, dict, bytes]:
    request = urllib.request.Request(url, headers=headers)
    with urllib.request.urlopen(request, timeout=10) as answer:  # noqa: S310 - loopback
        return answer.status, dict(answer.headers), answer.read()


_SITES: list[Path] = []


def prepared_site(env: dict) -> Path:
    """A folder holding ``static`` (collectstatic's output) and ``var`` (a migrated SQLite
    database), made once per test process with ``env``'s settings: each server reads the static
    files and starts on its own copy of the database."""
    if not _SITES:
        site = Path(tempfile.mkdtemp(prefix="registry-site-"))
        atexit.register(shutil.rmtree, site, True)
        built = {**env, "STATIC_ROOT": str(site / "static"), "REGISTRY_VAR_DIR": str(site / "var")}
        for step in (["collectstatic", "--noinput", "--verbosity", "0"], ["migrate", "-v", "0"]):
            subprocess.run([sys.executable, "manage.py", *step], cwd=REPO, env=built, check=True,
                           timeout=180)
        _SITES.append(site)
    return _SITES[0]


@contextlib.contextmanager
def gunicorn_as_the_dockerfile_runs_it(tmp_path, setup: str = "", extra_env: dict | None = None):
    """The web service under gunicorn with the Dockerfile's ``ENV`` and ``CMD`` (on a loopback
    port, SQLite and media under ``tmp_path``, and ``extra_env``), on a copy of the test
    process's collected and migrated site (``prepared_site``), after the Python code ``setup``
    (run by ``manage.py shell``). Yields ``(base URL, setup's output, gunicorn's process
    id)``."""
    gunicorn = need("gunicorn", "pip install -e '.[test]'")
    port = free_port()
    env = {k: v for k, v in os.environ.items()
           if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "DEBUG", "SQLITE_PATH")}
    env.update(dockerfile_env())
    env.update(MEDIA_ROOT=str(tmp_path / "media"),
               REGISTRY_VAR_DIR=str(tmp_path / "var"), SECRET_KEY=secrets.token_urlsafe(50),
               HTTPS="0", ALLOWED_HOSTS="127.0.0.1", PYTHONPATH=str(REPO))
    site = prepared_site(env)  # (without extra_env: the same site for every test)
    env.update(extra_env or {})
    assert env["DEBUG"] == "0"
    env["STATIC_ROOT"] = str(site / "static")
    shutil.copytree(site / "var", env["REGISTRY_VAR_DIR"], dirs_exist_ok=True)
    output = subprocess.run([sys.executable, "manage.py", "shell", "-c", setup], cwd=REPO,
                            env=env, check=True, timeout=180, capture_output=True,
                            text=True).stdout if setup else ""
    command = [gunicorn if part == "gunicorn" else part for part in dockerfile_cmd()]
    command[command.index("--bind") + 1] = f"127.0.0.1:{port}"
    server = subprocess.Popen(command, cwd=REPO, env=env, start_new_session=True,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_for_health(base, server, 30, lambda: server.stderr.read().decode())
        yield base, output, server.pid
    finally:
        stop_group(server, 20)


@pytest.mark.slow
def test_gunicorn_started_as_the_dockerfile_does_serves_a_page_and_a_static_file(tmp_path):
    with gunicorn_as_the_dockerfile_runs_it(tmp_path) as (base, _, _):
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
    with gunicorn_as_the_dockerfile_runs_it(tmp_path) as (base, _, _):
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


# -- issue 18: a stored pattern cannot pin the web server -------------------------------------------

ISSUE_18 = r"(?:(?:x|x)+)+y|[\s\S]"
TRAP_SETUP = f"""
import io
from django.contrib.auth import get_user_model
from django.db import transaction
from tokenizers_app.bpe import Tokenizer as Core
from tokenizers_app.models import ApiKey, Tokenizer, TokenizerVersion
from tokenizers_app.services.corpora import import_corpus
from tokenizers_app.services.versions import add_version
member = get_user_model().objects.create_user("member", password="pw-member-1")
import_corpus(stream=io.BytesIO(b"plain words and numbers 12 345\\n" * 2000), name="prose")
core = Core({{i: bytes([i]) for i in range(256)}}, [], pattern={ISSUE_18!r})
with transaction.atomic():  # a row written before the adversarial check was
    add_version(tokenizer=Tokenizer.objects.create(name="trap"), core=core,
                source=TokenizerVersion.Source.IMPORT, source_detail="written directly")
print(ApiKey.objects.create_key(member, "ci")[1])
"""


def call(url: str, body: bytes | None = None, **headers) -> tuple[int, bytes, float]:
    """``(status, body, seconds)`` of a request, 4xx and 5xx included."""
    started = time.monotonic()
    request = urllib.request.Request(url, data=body, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=120) as answer:  # noqa: S310 - loopback
            return answer.status, answer.read(), time.monotonic() - started
    except urllib.error.HTTPError as error:
        return error.code, error.read(), time.monotonic() - started


def workers_cpu_seconds(arbiter: int) -> float:
    """Processor seconds (user and system) spent so far by the worker processes of the gunicorn
    whose master is ``arbiter`` (read from /proc)."""
    children = Path(f"/proc/{arbiter}/task/{arbiter}/children").read_text().split()
    total = 0
    for child in children:
        fields = Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
    return total / os.sysconf("SC_CLK_TCK")


def multipart(files: dict[str, bytes]) -> tuple[bytes, str]:
    boundary = secrets.token_hex(12)
    parts = [f'--{boundary}\r\nContent-Disposition: form-data; name="files"; filename="{name}"'
             f'\r\nContent-Type: application/octet-stream\r\n\r\n'.encode() + data + b"\r\n"
             for name, data in files.items()]
    return b"".join(parts) + f"--{boundary}--\r\n".encode(), \
        f"multipart/form-data; boundary={boundary}"


@pytest.mark.slow
def test_a_backtracking_pattern_is_refused_or_served_within_the_budget_under_gunicorn(tmp_path):
    """Issue 18's pattern: three concurrent submissions of it (two imports, one run) are
    refused with the reason; three concurrent encodes of a version that already holds it (two
    API calls, one playground page) each answer 422 within about the 2 s budget (or 429 at once,
    when their worker process's slots are taken) while /health answers, and the workers are
    free again afterwards."""
    from tokenizers_app.bpe import Tokenizer as Core
    from tokenizers_app.bpe.formats import dumps_tokenizer

    trap = Core({i: bytes([i]) for i in range(256)}, [], pattern=ISSUE_18)
    with gunicorn_as_the_dockerfile_runs_it(tmp_path, TRAP_SETUP) as (base, output, arbiter):
        key = {"Authorization": f"Bearer {output.split()[-1]}"}
        tokenizer = f"{base}/api/tokenizers"
        native, native_type = multipart(dumps_tokenizer(trap, "native", "again"))
        minbpe, minbpe_type = multipart(dumps_tokenizer(trap, "minbpe", "again"))
        run = json.dumps({"tokenizer": "again", "corpora": ["prose"], "vocab_size": 300,
                          "pattern": ISSUE_18}).encode()
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            submitted = [
                pool.submit(call, f"{tokenizer}/again/import", native,
                            **{**key, "Content-Type": native_type}),
                pool.submit(call, f"{tokenizer}/again/import", minbpe,
                            **{**key, "Content-Type": minbpe_type}),
                pool.submit(call, f"{base}/api/runs", run,
                            **{**key, "Content-Type": "application/json"})]
            for status, body, _seconds in (future.result() for future in submitted):
                assert status == 400, body
                assert (f"pattern {ISSUE_18!r} took over 0.25 s to split a run of 3,000 'x': it "
                        f"backtracks without end") in json.loads(body)["detail"]

            text = json.dumps({"text": "x" * 40}).encode()
            encode = f"{tokenizer}/trap/versions/1/encode"
            page = f"{base}/playground/?versions=trap%401&text={'x' * 40}"
            cpu_before = workers_cpu_seconds(arbiter)
            slow = [pool.submit(call, encode, text, **{"Content-Type": "application/json"}),
                    pool.submit(call, encode, text, **{"Content-Type": "application/json"}),
                    pool.submit(call, page)]
            time.sleep(0.5)  # the three workers are busy with them now
            health = pool.submit(call, f"{base}/health").result()
            answers = [future.result() for future in slow]
        spent = workers_cpu_seconds(arbiter) - cpu_before
        for status, body, seconds in answers:
            # 422 past the budget; or 429 at once, when the three came to one worker process,
            # whose one slot for splitting with custom patterns (WEB_MATCH_SLOTS) and one place
            # in its queue (WEB_MATCH_QUEUE) the other two took
            assert status in (422, 429), body
            said = body.decode() if body.startswith(b"<") else json.loads(body)["detail"]
            if status == 429:
                assert "the server is busy splitting text with custom patterns" in said
                continue
            assert "this version&#x27;s pattern takes too long on this text" in said \
                or said.startswith("this version's pattern takes too long on this text: "
                                   "splitting 40 characters")
            # the wall clock: a backstop under MATCH_SECONDS (a minute each), loose because a
            # machine shared with other work gives each worker a fraction of a core
            assert seconds < 45, seconds
        # the budget counts processor time: 2 s per request, and a little for the rest of it
        # (without it, 3 x 60 s)
        assert spent < 3 * (2 + 0.75), spent
        assert health[0] == 200 and json.loads(health[1])["status"] == "ok"
        # a custom pattern matches without the GIL, and each worker has threads: /health is
        # answered while the three splits run, not after them
        assert health[2] < min(answer[2] for answer in answers if answer[0] == 422), \
            (health, answers)
        print(f"encodes answered in {', '.join(f'{a[2]:.2f}' for a in answers)} s, the workers "
              f"spent {spent:.2f} s of processor time on them; /health, asked while all three "
              f"workers were busy, answered in {health[2]:.2f} s")
        status, body, _ = call(encode, json.dumps({"text": "fine"}).encode(),
                               **{"Content-Type": "application/json"})
        assert status == 200 and json.loads(body)["ids"]  # the workers are free again
