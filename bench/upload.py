"""A large corpus uploaded through the page: the web process's memory and the stored sha256.

    python bench/upload.py [--megabytes 1024]

Starts ``manage.py runserver`` (threaded, no reloader) on a free loopback port with a fresh
SQLite database and media folder, signs in through the login page, and posts a multipart body of
``--megabytes`` MB of UTF-8 text to ``/corpora/upload/``, generated and sent in 1 MB blocks (so
the client stays small too). It samples the server's resident memory (``/proc/PID/status``)
every 0.2 s and prints the peak against the size sent, the time, and whether the sha256 the
registry stored equals the one computed while sending. Goal: the server's peak under 150 MB.
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
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


def multipart(boundary: str, token: str, name: str, blocks: int, digest):
    """The body's parts in order: the CSRF token, the name, then the file, block by block."""
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"csrfmiddlewaretoken\"\r\n\r\n"
            f"{token}\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\n"
            f"{name}\r\n--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; "
            f"filename=\"big.txt\"\r\nContent-Type: text/plain\r\n\r\n").encode()
    tail = f"\r\n--{boundary}--\r\n".encode()

    def body():
        yield head
        for _ in range(blocks):
            digest.update(BLOCK)
            yield BLOCK
        yield tail

    return body(), len(head) + blocks * len(BLOCK) + len(tail)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megabytes", type=int, default=1024)
    options = parser.parse_args()
    var = Path(tempfile.mkdtemp(prefix="bench-upload-"))
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    env.update(REGISTRY_VAR_DIR=str(var), DEBUG="1", CORPUS_MAX_BYTES=str(4 << 30))
    manage = [sys.executable, str(REPO / "manage.py")]
    subprocess.run(manage + ["migrate", "-v", "0"], env=env, check=True)
    subprocess.run(manage + ["shell", "-c", "from django.contrib.auth.models import User; "
                             "User.objects.create_user('bench', password='bench-pass-1')"],
                   env=env, check=True)
    port = free_port()
    server = subprocess.Popen(manage + ["runserver", f"127.0.0.1:{port}", "--noreload"], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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
        idle = rss_mb(server.pid)
        peak, done = [idle], threading.Event()

        def sample():
            while not done.wait(0.2):
                peak.append(rss_mb(server.pid))

        threading.Thread(target=sample, daemon=True).start()
        digest, boundary = hashlib.sha256(), uuid.uuid4().hex
        body, length = multipart(boundary, token, "big", options.megabytes, digest)
        started = time.perf_counter()
        response, _ = session.request("POST", "/corpora/upload/", body=body, headers={
            "Content-Type": f"multipart/form-data; boundary={boundary}",
            "Content-Length": str(length)})
        seconds = time.perf_counter() - started
        done.set()
        _, page = session.request("GET", response.getheader("Location") or "/corpora/big/")
        stored = re.search(rb"[0-9a-f]{64}", page)
        same = stored is not None and stored.group().decode() == digest.hexdigest()
        print(f"sent {length / 1e6:.0f} MB in {seconds:.1f} s ({length / 1e6 / seconds:.0f} MB/s),"
              f" answer {response.status} -> {response.getheader('Location')}")
        print(f"web process resident memory: {idle:.0f} MB before, peak {max(peak):.0f} MB "
              f"during the upload (goal: under 150 MB)")
        print(f"stored sha256 equals the sha256 of the bytes sent: {'yes' if same else 'NO'}")
    finally:
        server.terminate()
        server.wait(timeout=30)
        subprocess.run(["rm", "-rf", str(var)])


if __name__ == "__main__":
    main()
