"""Servers that tests start as processes of their own: a free loopback port, waiting until one
answers, and stopping its whole process group."""

import os
import random
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Callable


# Ports are picked under the kernel's ephemeral range (32768-60999 on Linux): a port picked in it
# can be taken by any outgoing connection before the server binds it, which CI saw once (weed:
# "bind: address already in use").
PORT_RANGE = (20000, 32000)


def free_ports(count: int) -> list[int]:
    """``count`` distinct loopback ports nobody listens on now, at random in ``PORT_RANGE``."""
    held: list[socket.socket] = []
    try:
        while len(held) < count:
            probe = socket.socket()
            try:
                probe.bind(("127.0.0.1", random.randint(*PORT_RANGE)))
            except OSError:
                probe.close()
                continue
            held.append(probe)
        return [probe.getsockname()[1] for probe in held]
    finally:
        for probe in held:
            probe.close()


def free_port() -> int:
    """A loopback port nobody listens on now."""
    return free_ports(1)[0]


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
