"""How long a custom pattern may take to split text.

Left alone, each split of a text by a custom pattern may take ``pretokenize.MATCH_SECONDS`` (the
bound a worker keeps, training or evaluating). A caller that must answer quickly, a web request,
sets a *budget* for all the splitting it does::

    with match_budget(2.0, "the 2 s a request may spend splitting text"):
        tokenizer.encode(text)  # PatternTooSlow once the splits have spent 2 s in all

Each split spends from the budget what it took; the one that runs past what is left stops there
and raises ``PatternTooSlow``. The seconds are processor seconds of this process, the clock the
``regex`` module times its ``timeout`` with (C's ``clock()``), so a loaded machine may take
longer by the wall clock. The budget lives in a context variable: each thread (and each asyncio
task) has its own, and none is set unless a caller sets one.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from ..errors import RegistryError


class PatternTooSlow(RegistryError, ValueError):
    """A custom pattern took longer to split a text than it was allowed (422: the request is
    well formed, but this version's pattern cannot serve this text in time)."""

    status = 422


class Budget:
    """Processor seconds left for splitting text: ``Budget(2.0, "2 s").left -> 2.0``."""

    def __init__(self, seconds: float, label: str):
        self.seconds, self.left, self.label = seconds, seconds, label

    def spend(self, seconds: float) -> None:
        self.left = max(0.0, self.left - seconds)


_BUDGET: ContextVar[Budget | None] = ContextVar("match_budget", default=None)


def current_budget() -> Budget | None:
    """The budget set by the innermost ``match_budget`` around this call, if any."""
    return _BUDGET.get()


@contextmanager
def match_budget(seconds: float, label: str = "") -> Iterator[Budget]:
    """Within the block, custom patterns split text for at most ``seconds`` in all; ``label``
    says in the error what the budget is ("the 2 s a request may spend splitting text")."""
    if not seconds > 0:
        raise ValueError(f"a match budget must be a positive number of seconds, got {seconds!r}")
    budget = Budget(seconds, label or f"the {seconds:g} s allowed for splitting text")
    token = _BUDGET.set(budget)
    try:
        yield budget
    finally:
        _BUDGET.reset(token)


def processor_seconds() -> float:
    """The clock budgets are counted in (the one ``regex`` times its ``timeout`` with)."""
    return time.process_time()


def too_slow(pattern: str, text: str, budget: Budget) -> PatternTooSlow:
    """The error for ``text`` that ``pattern`` could not split within what was left of
    ``budget``."""
    return PatternTooSlow(
        f"this version's pattern takes too long on this text: splitting {len(text):,} "
        f"characters with {pattern!r} ran past {budget.label}, because the pattern backtracks "
        f"on text like this (nested or overlapping repetitions such as (x|x)+); encode another "
        f"text, or use a version whose pattern is simpler")
