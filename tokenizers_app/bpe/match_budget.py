"""How long a custom pattern may take to split text.

Left alone, each split of a text by a custom pattern may take ``pretokenize.MATCH_SECONDS`` (the
bound a worker keeps, training or evaluating). A caller that must answer quickly, a web request,
sets a *budget* for all the splitting it does::

    with match_budget(2.0, "the 2 s a request may spend splitting text"):
        tokenizer.encode(text)  # PatternTooSlow once the splits have spent 2 s in all

Each split spends from the budget what it took; the one that runs past what is left stops there
and raises ``PatternTooSlow``. The seconds are processor seconds of *this thread*
(``time.thread_time``): what other threads of the process spend (other requests served by the
same web process) is never counted against this one. The ``regex`` module times its ``timeout``
with the whole process's processor time, which runs at least as fast as the thread's, so a split
that times out early because of other threads goes on from its last match (``thread_matches``).
The budget lives in a context variable: each thread (and each asyncio task) has its own, and
none is set unless a caller sets one.

A budget may carry a ``Gate``: at most a few splits with custom patterns run at once in the
process, a few more wait for their turn, and any other is refused at once (``PatternBusy``, 429),
so that requests splitting text cannot take every thread of a web process.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from ..errors import RegistryError


class PatternTooSlow(RegistryError, ValueError):
    """A custom pattern took longer to split a text than it was allowed (422: the request is
    well formed, but this version's pattern cannot serve this text in time)."""

    status = 422


class PatternBusy(RegistryError):
    """Every slot for splitting text with custom patterns in this process is taken and the queue
    for them is full (429: the request may be sent again in a few seconds)."""

    status = 429


class Gate:
    """At most ``slots`` threads split text with custom patterns at once, at most ``queue`` more
    wait (each up to ``wait`` seconds) for a slot; any other is refused with ``PatternBusy``.
    A thread that holds a slot enters again freely (a split inside a split)."""

    def __init__(self, slots: int, queue: int, wait: float, label: str = ""):
        if slots < 1 or queue < 0:
            raise ValueError(f"a gate needs at least one slot and a queue of 0 or more, got "
                             f"{slots!r} slots and a queue of {queue!r}")
        self.slots, self.queue, self.wait, self.label = slots, queue, wait, label
        self._free = threading.BoundedSemaphore(slots)
        self._lock = threading.Lock()
        self._waiting = 0
        self._held = threading.local()

    @contextmanager
    def slot(self) -> Iterator[None]:
        depth = getattr(self._held, "depth", 0)
        if depth == 0:
            self._take()
        self._held.depth = depth + 1
        try:
            yield
        finally:
            self._held.depth = depth
            if depth == 0:
                self._free.release()

    def _take(self) -> None:
        if self._free.acquire(blocking=False):
            return
        with self._lock:
            if self._waiting >= self.queue:
                raise self._busy()
            self._waiting += 1
        try:
            taken = self._free.acquire(timeout=self.wait)
        finally:
            with self._lock:
                self._waiting -= 1
        if not taken:
            raise self._busy()

    def _busy(self) -> PatternBusy:
        return PatternBusy(
            f"the server is busy splitting text with custom patterns for other requests "
            f"({self.label or f'{self.slots} at once, {self.queue} waiting'}): nothing was "
            f"encoded; send the request again in a few seconds")


class Budget:
    """Processor seconds left for splitting text: ``Budget(2.0, "2 s").left -> 2.0``; ``gate``,
    if any, bounds how many splits run at once."""

    def __init__(self, seconds: float, label: str, gate: Gate | None = None):
        self.seconds, self.left, self.label, self.gate = seconds, seconds, label, gate

    def spend(self, seconds: float) -> None:
        self.left = max(0.0, self.left - seconds)


_BUDGET: ContextVar[Budget | None] = ContextVar("match_budget", default=None)


def current_budget() -> Budget | None:
    """The budget set by the innermost ``match_budget`` around this call, if any."""
    return _BUDGET.get()


@contextmanager
def match_budget(seconds: float, label: str = "", gate: Gate | None = None) -> Iterator[Budget]:
    """Within the block, custom patterns split text for at most ``seconds`` in all, one split
    at a time through ``gate`` if one is given; ``label`` says in the error what the budget is
    ("the 2 s a request may spend splitting text")."""
    if not seconds > 0:
        raise ValueError(f"a match budget must be a positive number of seconds, got {seconds!r}")
    budget = Budget(seconds, label or f"the {seconds:g} s allowed for splitting text", gate)
    token = _BUDGET.set(budget)
    try:
        yield budget
    finally:
        _BUDGET.reset(token)


def processor_seconds() -> float:
    """The processor time of the whole process: the clock ``regex`` times its ``timeout``
    with."""
    return time.process_time()


def thread_seconds() -> float:
    """The clock budgets are counted in: the processor time of this thread alone."""
    return time.thread_time()


MOST_STRETCH = 8.0  # a retried split's timeout is at most this many times what is left


def thread_matches(compiled, text: str, budget: Budget) -> Iterator:
    """``compiled.finditer(text)`` while ``budget`` lasts in this thread's processor seconds,
    which it spends; past them ``TimeoutError``.

    ``regex`` stops a call after ``timeout`` seconds of the *process*; when other threads make
    it stop before this thread has spent what is left, the split goes on from its last match,
    with a timeout stretched by how much faster the process's clock ran than the thread's (at
    most ``MOST_STRETCH`` times)."""
    position, stretch = 0, 1.0
    while True:
        if budget.left <= 0:
            raise TimeoutError
        started, started_process = thread_seconds(), processor_seconds()
        try:
            for match in compiled.finditer(text, position, timeout=budget.left * stretch,
                                           concurrent=True):
                position = match.end()
                yield match
            return
        except TimeoutError:
            took = thread_seconds() - started
            stretch = min(MOST_STRETCH, max(1.0, (processor_seconds() - started_process)
                                            / max(took, 1e-3)))
        finally:
            budget.spend(thread_seconds() - started)


def too_slow(pattern: str, text: str, budget: Budget) -> PatternTooSlow:
    """The error for ``text`` that ``pattern`` could not split within what was left of
    ``budget``."""
    return PatternTooSlow(
        f"this version's pattern takes too long on this text: splitting {len(text):,} "
        f"characters with {pattern!r} ran past {budget.label}, because the pattern backtracks "
        f"on text like this (nested or overlapping repetitions such as (x|x)+); encode another "
        f"text, or use a version whose pattern is simpler")
