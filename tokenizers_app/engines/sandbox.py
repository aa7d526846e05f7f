"""Another library's tokenizer files are untrusted programs: a ``tokenizer.json``'s regexes and
normalizers, or a SentencePiece model, run in native code that can panic, abort the process on a
failed allocation, or run for ever. So the registry never runs them in a web process or a worker
process: it runs them in child processes of its own, each under a memory limit (``RLIMIT_AS``),
a processor-time limit (``RLIMIT_CPU``) and a wall-clock limit kept by the parent, which kills a
child that overruns. A child that dies is a refusal in words (``EngineFailed``, 422) naming the
cause, and a new child takes its place; the calling process lives on.

- ``run_once(request, limits)``: a disposable child for one request (an import's check).
- ``EnginePool``: a few children kept per process, each holding the engines it loaded (keyed by
  digest, bounded by the memory they measured), for encoding on request and evaluating.

The parent and a child speak in frames (8-byte big-endian length, then JSON): the child's answer
is parsed as data only, never unpickled. Plain Python, no Django: limits are parameters.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass

from ..errors import Invalid, RegistryError, Unavailable, Unencodable

from .frames import b64, read_frame, unb64, write_frame  # noqa: F401 - re-exported

MB = 1024 ** 2


class EngineFailed(RegistryError, ValueError):
    """The library could not do this within its limits, or died trying (422 in words: the
    request is well formed, but this tokenizer cannot serve it)."""

    status = 422


class EngineBusy(Unavailable):
    """Every child of the pool stayed busy for the whole wait (503: try again)."""


@dataclass(frozen=True)
class Limits:
    """What one child may use: bytes of address space, processor seconds in its life, and wall
    seconds per request (the parent's clock)."""

    memory_bytes: int = 1536 * MB
    cpu_seconds: int = 600
    wall_seconds: float = 60.0


# -- the parent's side ------------------------------------------------------------------------


def _child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "CELERY_"))}
    # one thread: no thread pool of the library's reserving address space, and a panic's
    # report kept short
    env.update(TOKENIZERS_PARALLELISM="false", RAYON_NUM_THREADS="1", RUST_BACKTRACE="0",
               OMP_NUM_THREADS="1", PYTHONDONTWRITEBYTECODE="1")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


class Child:
    """One child process running ``python -m tokenizers_app.engines.sandbox_child``."""

    def __init__(self, limits: Limits):
        self.limits = limits
        self.stderr = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tokenizers_app.engines.sandbox_child", str(limits.memory_bytes),
             str(limits.cpu_seconds)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, env=_child_env(),
            close_fds=True, start_new_session=True)
        self.loaded: set[str] = set()

    def ask(self, message: dict, wall_seconds: float | None = None) -> dict:
        """The child's answer to ``message``; ``EngineFailed`` in words when it dies, overruns
        its time or answers nonsense (the child is then killed: call ``alive()``)."""
        seconds = self.limits.wall_seconds if wall_seconds is None else wall_seconds
        try:
            write_frame(self.process.stdin, message)
            return read_frame(self.process.stdout.fileno(), time.monotonic() + seconds)
        except TimeoutError:
            self.kill()
            raise EngineFailed(f"the tokenizer's library took over {seconds:g} s on this "
                               f"request and was stopped") from None
        except (EOFError, OSError, ValueError):
            self.kill()
            raise EngineFailed(self.death()) from None

    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                self.process.kill()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:
                pass

    def death(self) -> str:
        """Why the child died, in words (its exit status and the library's last words)."""
        code = self.process.wait(timeout=10) if self.process.poll() is None else \
            self.process.returncode
        self.stderr.seek(0, os.SEEK_END)
        self.stderr.seek(max(0, self.stderr.tell() - 4096))
        said = self.stderr.read().decode("utf-8", "replace")
        megabytes = self.limits.memory_bytes // MB
        if "memory allocation of" in said or "MemoryError" in said or "bad_alloc" in said:
            return (f"the tokenizer's library needed more than the {megabytes:,} MB of memory "
                    f"it may use (a normalizer or model that grows the text or the vocab "
                    f"without bound) and was stopped")
        if code == -signal.SIGXCPU:
            return (f"the tokenizer's library used over {self.limits.cpu_seconds} s of "
                    f"processor time and was stopped")
        if code is not None and code < 0:
            name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ \
                else str(-code)
            return f"the tokenizer's library crashed ({name}) and was stopped"
        return f"the tokenizer's library stopped unexpectedly (exit status {code})"

    def close(self) -> None:
        self.kill()
        self.stderr.close()


def run_once(message: dict, limits: Limits) -> dict:
    """Answer ``message`` in a disposable child under ``limits``; ``EngineFailed`` in words when
    the child dies or overruns."""
    child = Child(limits)
    try:
        return child.ask(message)
    finally:
        child.close()


class EnginePool:
    """At most ``size`` children, started on first use and again when one dies. ``call(...)``
    takes a free child (waiting at most ``wait_seconds``, then ``EngineBusy``), sends the engine's
    file the first time that child meets its digest, and answers the request."""

    def __init__(self, size: int, limits: Limits, wait_seconds: float = 10.0):
        self.size, self.limits, self.wait_seconds = max(size, 1), limits, wait_seconds
        self._free: queue.Queue[Child | None] = queue.Queue()
        for _ in range(self.size):
            self._free.put(None)  # a place for a child, started when first taken
        self.pid = os.getpid()

    def call(self, op: str, kind: str, digest: str, data: bytes, wall_seconds: float | None = None,
             **fields) -> dict:
        try:
            child = self._free.get(timeout=self.wait_seconds)
        except queue.Empty:
            raise EngineBusy(f"every tokenizer process is busy (ENGINE_POOL_SIZE {self.size}); "
                             f"try again in a moment") from None
        try:
            if child is None or not child.alive():
                if child is not None:
                    child.close()
                child = Child(self.limits)
            message = {"op": op, "kind": kind, "digest": digest, **fields}
            if digest not in child.loaded or op == "load":
                message["data"] = b64(data)
            answer = child.ask(message, wall_seconds)
            if answer.get("need"):  # the child let it go to keep within its memory
                answer = child.ask({**message, "data": b64(data)}, wall_seconds)
            child.loaded = set(answer.pop("loaded", []))
            if answer.pop("retire", False):  # near its processor-time limit: a fresh one next
                child.close()
                child = None
            return answer
        except EngineFailed:
            if child is not None:
                child.close()
            child = None
            raise
        finally:
            self._free.put(child)

    def close(self) -> None:
        """Stop the children now free (one still busy is stopped when it comes back: ``call``
        finds it dead or replaced); the pool stays usable, starting children anew."""
        for _ in range(self.size):
            try:
                child = self._free.get_nowait()
            except queue.Empty:
                return
            if child is not None:
                child.close()
            self._free.put(None)


_POOLS: dict[str, EnginePool] = {}
_POOLS_LOCK = threading.Lock()


def pool(name: str, size: int, limits: Limits, wait_seconds: float) -> EnginePool:
    """This process's pool ``name`` (a forked process makes its own)."""
    with _POOLS_LOCK:
        found = _POOLS.get(name)
        if found is None or found.pid != os.getpid() or found.limits != limits or \
                found.size != size:
            if found is not None and found.pid == os.getpid():
                found.close()
            found = _POOLS[name] = EnginePool(size, limits, wait_seconds)
        return found


def close_pools() -> None:
    with _POOLS_LOCK:
        for found in _POOLS.values():
            if found.pid == os.getpid():
                found.close()
        _POOLS.clear()


def raise_refusal(answer: dict) -> dict:
    """The answer, or its refusal raised as the class the child named."""
    if "error" in answer:
        kind = answer.get("class")
        if kind == "unencodable":
            raise Unencodable(answer["error"])
        if kind == "invalid":
            raise Invalid(answer["error"], field=answer.get("field") or "files")
        if kind == "value":
            raise ValueError(answer["error"])
        raise EngineFailed(answer["error"])
    return answer
