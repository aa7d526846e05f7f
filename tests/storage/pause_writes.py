"""Loaded into a test worker (``TEST_WORKER_INCLUDE``): with ``TEST_PAUSE_WRITES_DIR`` set, a
multipart upload of a count file stops after its first part is sent (it writes ``paused`` in
that folder, then sleeps), so that a test can kill the worker in the middle of the write."""

import os
import time
from pathlib import Path

from tokenizers_app.storage.s3 import S3Writer

FOLDER = os.environ.get("TEST_PAUSE_WRITES_DIR")

if FOLDER:
    send = S3Writer._send

    def send_then_pause(self, chunk: bytes) -> None:
        send(self, chunk)
        if self.name.startswith("runs/"):
            (Path(FOLDER) / "paused").write_text(self.name)
            time.sleep(600)  # until the test kills this worker

    S3Writer._send = send_then_pause
