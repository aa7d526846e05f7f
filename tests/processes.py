"""Servers that tests start as processes of their own: a free loopback port, waiting until one
answers, and stopping its whole process group."""

import os
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable


def free_port() -> int:
    """A loopback port nobody listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_health(base: str, process: subprocess.Popen, seconds: float,
                    output: Callable[[], str] = lambda: "") -> None:
    """Return once ``base + "/health"`` answers 200; fail, with the server's ``output()``, if the
    process exits first or ``seconds`` pass."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(base + "/health", timeout=2) as answer:  # noqa: S310
                if answer.status == 200:
                    return
        except OSError:
            pass
        if process.poll() is not None:
            raise AssertionError(f"the server stopped (exit code {process.returncode}) before "
                                 f"{base}/health answered:\n{output()}")
        if time.monotonic() > deadline:
            raise AssertionError(f"{base}/health did not answer within {seconds} s:\n{output()}")
        time.sleep(0.1)


def stop_group(process: subprocess.Popen, grace: float = 20) -> None:
    """SIGTERM the process's group (started with ``start_new_session=True``), SIGKILL it after
    ``grace`` seconds, and reap the process."""
    try:
        os.killpg(process.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()
