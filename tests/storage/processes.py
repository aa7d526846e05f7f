"""The web service as a process of its own (gunicorn, as the Dockerfile runs it), for the tests
where web and workers share nothing but the database, the broker and the bucket; and HTTP
calls to it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
import uuid
from pathlib import Path

from tests.processes import free_port, stop_group, wait_for_health

REPO = Path(__file__).resolve().parent.parent.parent


class Web:
    def __init__(self, env: dict, log_path: Path):
        self.env, self.log_path, self.port = env, log_path, free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = 60) -> Web:
        gunicorn = str(Path(sys.executable).parent / "gunicorn")
        command = [gunicorn, "registry.wsgi", "--bind", f"127.0.0.1:{self.port}",
                   "--workers", "1", "--threads", "4", "--timeout", "120"]
        self.process = subprocess.Popen(command, cwd=REPO, env={**os.environ, **self.env},
                                        stdout=open(self.log_path, "ab"),
                                        stderr=subprocess.STDOUT, start_new_session=True)
        wait_for_health(self.base, self.process, timeout, self.log)
        return self

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            stop_group(self.process)

    def call(self, method: str, path: str, body: bytes | None = None, timeout: float = 120,
             **headers) -> tuple[int, dict, bytes]:
        request = urllib.request.Request(self.base + path, data=body, method=method,
                                         headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as answer:  # noqa: S310
                return answer.status, dict(answer.headers), answer.read()
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), error.read()

    def call_json(self, method: str, path: str, payload=None, **headers):
        body = json.dumps(payload).encode() if payload is not None else None
        if body is not None:
            headers["Content-Type"] = "application/json"
        status, _, answer = self.call(method, path, body, **headers)
        return status, json.loads(answer) if answer else None

    def upload(self, key: str, name: str, data: bytes, evaluation: bool = False):
        """``POST /api/corpora`` as multipart/form-data: ``(status, JSON answer)``."""
        boundary = uuid.uuid4().hex
        fields = [("name", name)] + ([("evaluation", "true")] if evaluation else [])
        body = b"".join(f'--{boundary}\r\nContent-Disposition: form-data; name="{field}"\r\n\r\n'
                        f"{value}\r\n".encode() for field, value in fields)
        body += (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
                 f'filename="{name}.txt"\r\nContent-Type: text/plain\r\n\r\n').encode()
        body += data + f"\r\n--{boundary}--\r\n".encode()
        status, _, answer = self.call(
            "POST", "/api/corpora", body, Authorization=f"Bearer {key}",
            **{"Content-Type": f"multipart/form-data; boundary={boundary}"})
        return status, json.loads(answer)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-5000:]
