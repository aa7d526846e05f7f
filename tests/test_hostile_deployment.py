"""Hostile tokenizer files against the web service as it is deployed (gunicorn started as the
Dockerfile does): each file of ``tests/hostile_files`` is imported and then encoded anonymously,
through the API and the playground, while /health is asked throughout; versions written before
imports were checked (a library that panics or aborts on encoding) are encoded too. Each request
ends in a refusal in words or a bounded answer, the workers live, /health answers, and no row or
file is left behind. Then several clients encode with more big versions than the web budget
holds: each web worker stays within its budget and every answer is a 200 or a 4xx in words."""

import concurrent.futures
import os
import http.cookiejar
import json
import random
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from tests.hostile_files import CAUSES, HOSTILE
from tests.test_deployment import call, gunicorn_as_the_dockerfile_runs_it, multipart

pytestmark = pytest.mark.slow

# versions written straight to the database (as imported before the checks existed)
# (file, text, whether the answer is a refusal; else a bounded answer)
PLANTED = {"p-grows": ("multiplying_replace", "a" * 1000, True),
           "p-regex-grows": ("multiplying_regex_replace", "b" * 5000, False),
           "p-split-panics": ("catastrophic_split", "x" * 30, True),
           "p-replace-panics": ("catastrophic_replace", "x" * 30, True),
           "p-lookahead-panics": ("nested_regex_lookahead", "a" * 40, True)}
SETUP = f"""
from django.contrib.auth import get_user_model
from django.db import transaction
from tests.engines.test_engines import KINDS
from tests.hostile_files import HOSTILE
from tokenizers_app.engines.hf import HFEngine
from tokenizers_app.models import ApiKey, Tokenizer, TokenizerVersion
from tokenizers_app.services.versions import add_version, import_tokenizer
member = get_user_model().objects.create_user("member", password="pw-member-1")
for name, (hostile, _, _) in {PLANTED!r}.items():
    with transaction.atomic():
        add_version(tokenizer=Tokenizer.objects.create(name=name),
                    core=HFEngine(HOSTILE[hostile]()["tokenizer.json"]),
                    source=TokenizerVersion.Source.IMPORT, source_detail="written directly")
import_tokenizer(files=KINDS["bert-wordpiece"](), tokenizer_name="good")
print(ApiKey.objects.create_key(member, "ci")[1])
"""


def workers_of(arbiter: int) -> set[int]:
    return set(map(int, Path(f"/proc/{arbiter}/task/{arbiter}/children").read_text().split()))


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


class HealthWatch:
    """Asks /health every 0.2 s from a thread of its own; keeps every status (a time-out or a
    reset is status 0)."""

    def __init__(self, base: str):
        self.base, self.statuses, self._stop = base, [], threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        while not self._stop.is_set():
            try:
                with urllib.request.urlopen(self.base + "/health", timeout=10) as answer:
                    self.statuses.append(answer.status)
            except Exception:  # noqa: BLE001 - a refused, reset or timed-out /health
                self.statuses.append(0)
            time.sleep(0.2)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(15)


def in_words(status: int, body: bytes) -> str:
    """The refusal's words: the JSON ``detail`` of an API answer."""
    assert 400 <= status < 500, (status, body[:500])
    detail = json.loads(body)["detail"]
    assert isinstance(detail, str) and detail and "Traceback" not in detail
    return detail


BUSY_RETRIES = 5


def busy(status: int, body: bytes) -> bool:
    """Whether an answer is the 503 of a web process whose tokenizer processes are all busy."""
    return status == 503 and b"is busy" in body


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def test_hostile_files_are_refused_in_words_and_the_deployment_lives(tmp_path):
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {"MAX_VOCAB_SIZE": "50000", "TMPDIR": str(temp), "ENGINE_MEMORY_BYTES":
           str(768 * 1024**2)}
    with gunicorn_as_the_dockerfile_runs_it(tmp_path, SETUP, env) as (base, output, arbiter):
        key = {"Authorization": f"Bearer {output.split()[-1]}"}
        workers = workers_of(arbiter)
        media, staged = files_under(tmp_path / "media"), files_under(temp)  # the setup's
        json_type = {"Content-Type": "application/json"}

        def encode(name: str, text: str):
            """The encode API, asked again while it answers that every tokenizer process is
            busy (a 503 that says "try again in a moment": on a loaded machine the hostile
            versions can hold both of a web process's children past the 10 s a request waits
            for one)."""
            for _ in range(BUSY_RETRIES):
                answer = call(f"{base}/api/tokenizers/{name}/versions/1/encode",
                              json.dumps({"text": text}).encode(), **json_type)
                if not busy(*answer[:2]):
                    break
            return answer

        def playground(name: str, text: str):
            """The playground's form POSTed, as a browser sends it (its CSRF cookie and
            token first)."""
            cookies = http.cookiejar.CookieJar()
            browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(cookies))
            form = browser.open(base + "/playground/", timeout=30).read().decode()
            [token] = re.findall(r'name="csrfmiddlewaretoken" value="([^"]+)"', form)
            body = urllib.parse.urlencode({"csrfmiddlewaretoken": token, "text": text,
                                           "versions": f"{name}@1"}).encode()
            request = urllib.request.Request(base + "/playground/", data=body,
                                             headers={"Referer": base + "/playground/"})
            for _ in range(BUSY_RETRIES):  # asked again while busy, as encode is
                try:
                    with browser.open(request, timeout=60) as answer:
                        return answer.status, answer.read(), 0.0
                except urllib.error.HTTPError as error:
                    answer = error.code, error.read(), 0.0
                if not busy(*answer[:2]):
                    break
            return answer

        def import_file(name: str):
            body, content_type = multipart(HOSTILE[name]())
            return call(f"{base}/api/tokenizers/h-{name.replace('_', '-')}/import", body,
                        **{**key, "Content-Type": content_type})

        with HealthWatch(base) as health, concurrent.futures.ThreadPoolExecutor(6) as pool:
            imports = {name: pool.submit(import_file, name) for name in HOSTILE}
            planted = {name: (pool.submit(encode, name, text), pool.submit(playground, name, text))
                       for name, (_, text, _) in PLANTED.items()}
            for name, future in imports.items():
                status, body, _ = future.result()
                assert CAUSES[name] in in_words(status, body), (name, body)
            for name, (api, page) in planted.items():
                status, body, _ = api.result()
                if PLANTED[name][2]:
                    assert "tokenizer's library" in in_words(status, body), (name, body)
                else:  # bounded: the text's tokens
                    assert status == 200 and len(json.loads(body)["ids"]) <= 5000, (name, body[:500])
                status, body, _ = page.result()
                assert (status, "tokenizer&#x27;s library" in body.decode()) == (
                    (422, True) if PLANTED[name][2] else (200, False)), (name, status)
            # the refused files left no version: encoding their names is a 404 in words
            after = [(name, pool.submit(encode, f"h-{name.replace('_', '-')}", "hello"),
                      pool.submit(playground, f"h-{name.replace('_', '-')}", "hello"))
                     for name in HOSTILE]
            for name, api, page in after:
                assert api.result()[0] == 404 and "no tokenizer" in in_words(*api.result()[:2])
                status, body, _ = page.result()
                assert status == 200 and "no tokenizer named" in body.decode(), (name, status)
            good = [pool.submit(encode, "good", "hello world") for _ in range(6)]
            assert all(f.result()[0] == 200 and json.loads(f.result()[1])["ids"] for f in good)
        assert health.statuses and set(health.statuses) == {200}, health.statuses
        assert workers_of(arbiter) == workers  # no web worker died
        listed = {t["name"] for t in json.loads(call(f"{base}/api/tokenizers")[1])["items"]}
        assert listed == {*PLANTED, "good"}  # no row of a refused file
        assert files_under(tmp_path / "media") == media  # no file either
        assert files_under(temp) == staged  # nor anything staged in the temp folder
        print(f"{len(HOSTILE)} hostile files refused, {len(PLANTED)} hostile versions "
              f"answered 422; /health answered {len(health.statuses)} times, all 200")


BIG = 8  # versions of 150,000 pieces (about 37 MB each when loaded in a web process): eight
# times what the budget holds, each asked twice by each client in a random order. Fewer cannot
# fail: with 4 and the budget ignored (versions kept by count), the workers grew by 170 to 187
# MB, under the bound below (207 MB); with 8, by 256 to 318 MB (kept by the budget: 143 to 159).
BIG_SETUP = f"""
import json
from django.db import transaction
from tests.hostile_files import wordpiece
from tokenizers_app.engines.hf import HFEngine
from tokenizers_app.models import Tokenizer, TokenizerVersion
from tokenizers_app.services.versions import add_version
for n in range({BIG}):
    vocab = {{f"w{{i}}v{{n}}": i for i in range(150_000)}}
    vocab["[UNK]"] = 150_000
    vocab["hello"], vocab["world"] = 150_001, 150_002
    with transaction.atomic():
        add_version(tokenizer=Tokenizer.objects.create(name=f"big{{n}}"),
                    core=HFEngine(json.dumps(wordpiece(vocab, pre_tokenizer={{
                        "type": "Whitespace"}})).encode()),
                    source=TokenizerVersion.Source.IMPORT)
"""
BUDGET = int(os.environ.get("TRY_BUDGET", 48 * 1024**2))


def test_more_big_versions_than_the_budget_holds_keep_each_web_worker_within_it(tmp_path):
    # (what is drilled is memory: an encode may wait for its child on a busy machine, where
    # the 5 s a request may take by default made some answers 422 on the loaded CI machine)
    env = {"LOADED_TOKENIZERS_BYTES": str(BUDGET), "LOADED_TOKENIZERS": "100",
           "ENGINE_WEB_SECONDS": "60"}
    with gunicorn_as_the_dockerfile_runs_it(tmp_path, BIG_SETUP, env) as (base, _, arbiter):
        workers = workers_of(arbiter)
        before = {pid: rss_bytes(pid) for pid in workers}
        answers, peaks, done = [], {pid: 0 for pid in workers}, threading.Event()

        def client(seed: int):
            order = [f"big{n}" for n in range(BIG)] * 2
            random.Random(seed).shuffle(order)
            for name in order:
                answers.append(call(f"{base}/api/tokenizers/{name}/versions/1/encode",
                                    json.dumps({"text": "hello world"}).encode(),
                                    **{"Content-Type": "application/json"})[:2])

        def sample():
            while not done.is_set():
                for pid in workers:
                    peaks[pid] = max(peaks[pid], rss_bytes(pid))
                time.sleep(0.05)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        with concurrent.futures.ThreadPoolExecutor(3) as pool:
            list(pool.map(client, range(3)))
        done.set()
        sampler.join()
        for status, body in answers:
            assert status == 200 or in_words(status, body), (status, body[:300])
        assert sum(status == 200 for status, _ in answers) == len(answers), \
            [a for a in answers if a[0] != 200][:3]
        assert workers_of(arbiter) == workers
        # each worker holds at most the budget of loaded versions, plus one load in flight
        # (loads are one at a time: the version loaded, its description read from its child,
        # the one it replaces; about 3 x 37 MB) and the allocator's slack. Kept by count
        # (TRY_BUDGET=4000000000), the workers grew by 240 to 306 MB with 8 versions.
        grown = {pid: peaks[pid] - before[pid] for pid in workers}
        print({pid: f"{g / 2**20:.0f} MB" for pid, g in grown.items()})
        assert max(grown.values()) < BUDGET + (3 * 37 + 48) * 1024**2, grown


def probe(port: int, path: str, headers: dict, length: int, prefix: bytes, sent: int,
          temp: Path, rest: bytes = b"") -> tuple[int, list[str]]:
    """Send a POST's headers (``Content-Length: length``) and its first ``sent`` bytes (``prefix``
    then filler), wait for the server to do what it does with them, list the temp folder, send
    ``rest`` (the end of a body whose whole is ``sent + len(rest)`` bytes), and read the status.
    ``(status, files in the temp folder while the body was half sent)``."""
    import socket

    with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
        head = "".join(f"{k}: {v}\r\n" for k, v in {"Host": "127.0.0.1",
                                                     "Content-Length": str(length),
                                                     **headers}.items())
        connection.sendall(f"POST {path} HTTP/1.1\r\n{head}\r\n".encode())
        body = prefix + b"x" * (sent - len(prefix))
        try:
            for start in range(0, len(body), 1 << 16):
                connection.sendall(body[start:start + (1 << 16)])
        except (BrokenPipeError, ConnectionResetError):
            pass  # answered (and closed) before the body was read
        time.sleep(1.5)
        staged = files_under(temp)
        try:
            connection.sendall(rest)
        except (BrokenPipeError, ConnectionResetError):
            pass
        answer = b""
        while b"\r\n" not in answer:
            try:
                chunk = connection.recv(4096)
            except TimeoutError:  # no answer until the whole body is sent: status 0
                break
            if not chunk:
                break
            answer += chunk
    return int(answer.split(b" ", 2)[1]) if answer else 0, staged


def test_requests_not_allowed_to_send_files_stage_nothing_in_the_temp_folder(tmp_path):
    """The issue's staging cases, measured in the server's temp folder while each body is half
    sent: a sign-in (anonymous, and the admin's) and ``/runs/new/`` with a valid CSRF token,
    each with a body of hundreds of MB; tokenizer imports with a garbage session cookie or API
    key; and a 3 MB file sent in a sign-in form under the size limit (skipped, never staged)."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    with gunicorn_as_the_dockerfile_runs_it(tmp_path, "", {"TMPDIR": str(temp)}) as (
            base, _, _):
        port = int(base.rsplit(":", 1)[1])
        cookies = http.cookiejar.CookieJar()
        browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(cookies))
        browser.open(base + "/accounts/login/", timeout=30).read()
        csrf = next(c.value for c in cookies if c.name == "csrftoken")
        before = files_under(temp)
        boundary = "b0undary"
        multipart_type = f"multipart/form-data; boundary={boundary}"

        def file_part(field: str, extra: str = "") -> bytes:
            return (f"--{boundary}\r\n{extra}Content-Disposition: form-data; name=\"{field}\"; "
                    f"filename=\"big.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n"
                    ).encode()

        token_field = (f"--{boundary}\r\nContent-Disposition: form-data; "
                       f"name=\"csrfmiddlewaretoken\"\r\n\r\n{csrf}\r\n")
        cases = {
            "anonymous sign-in, 1.5 GB": ("/accounts/login/", {}, 1_500_000_000),
            "admin sign-in, 200 MB": ("/admin/login/", {}, 200_000_000),
            "/runs/new/ with a valid CSRF token, 200 MB": (
                "/runs/new/", {"Cookie": f"csrftoken={csrf}"}, 200_000_000),
            "an import page with a garbage session, 90 MB": (
                "/tokenizers/import/", {"Cookie": f"csrftoken={csrf}; sessionid=garbage"},
                90_000_000),
            "an API import with a garbage key, 90 MB": (
                "/api/tokenizers/x/import", {"Authorization": "Bearer trk_garbage"},
                90_000_000),
            "an API import with a garbage session, 90 MB": (
                "/api/tokenizers/x/import", {"Cookie": "sessionid=garbage"}, 90_000_000)}
        for what, (path, headers, length) in cases.items():
            prefix = token_field.encode() + file_part("files")
            status, staged = probe(port, path, {**headers, "Content-Type": multipart_type},
                                   length, prefix, 4_000_000, temp)
            assert staged == before, (what, staged)
            assert status in (302, 401, 403, 413), (what, status)
        # under the size limit, a file in a form that takes none is read and dropped
        end = f"\r\n--{boundary}--\r\n".encode()
        prefix = token_field.encode() + file_part("file")
        status, staged = probe(port, "/accounts/login/", {
            "Cookie": f"csrftoken={csrf}", "Content-Type": multipart_type,
            "Referer": base + "/accounts/login/"}, 3_000_000 + len(end), prefix, 3_000_000,
            temp, end)
        assert staged == before and status == 200, (status, staged)
        assert files_under(temp) == before
