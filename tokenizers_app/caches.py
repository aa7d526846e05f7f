"""One bounded cache for what a process keeps in memory (loaded tokenizers, rendered downloads):
least recently used forgotten first, safe to share between a server's threads. Plain Python.

A cache may be bounded in bytes too (``max_bytes``, with ``weigh`` measuring an entry when it is
put: ``deep_size`` walks the objects it holds and adds up their sizes): an entry larger than the
whole budget is not kept at all, and older ones are forgotten until the total fits.

``functools.lru_cache`` does not fit these: their bound is a setting read on each use (tests and
deployments change it), and a download's entry is checked against its file before it is used.
"""

from __future__ import annotations

import gc
import sys
import threading
import types
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class BoundedCache(Generic[V]):
    """At most ``maxsize`` entries (a number, or a function giving it on each ``put``)::

        cache = BoundedCache(2)
        cache.put("a", 1); cache.put("b", 2)
        cache.get("a")      # -> 1, and "a" is now the most recently used
        cache.put("c", 3)   # forgets "b", the least recently used
        cache.get("b")      # -> None
    """

    def __init__(self, maxsize: int | Callable[[], int],
                 max_bytes: Callable[[], int] | None = None,
                 weigh: Callable[[V], int] | None = None):
        self._maxsize = maxsize
        self._max_bytes, self._weigh = max_bytes, weigh
        self._entries: OrderedDict[Hashable, V] = OrderedDict()
        self._weights: dict[Hashable, int] = {}
        self._lock = threading.Lock()

    @property
    def bytes(self) -> int:
        """The measured size of the entries kept (0 for a cache bounded by count alone)."""
        with self._lock:
            return sum(self._weights.values())

    @property
    def maxsize(self) -> int:
        return self._maxsize() if callable(self._maxsize) else self._maxsize

    def get(self, key: Hashable) -> V | None:
        """The value kept for ``key`` (now the most recently used), or None."""
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def put(self, key: Hashable, value: V) -> V:
        """Keep ``value`` for ``key``, forgetting the least recently used beyond the bounds (an
        entry larger than the whole byte budget is returned, not kept)."""
        budget = self._max_bytes() if self._max_bytes is not None else None
        weight = self._weigh(value) if budget is not None and self._weigh is not None else 0
        with self._lock:
            if budget is not None and weight > budget:
                self._forget(key)
                return value
            self._entries[key] = value
            self._weights[key] = weight
            self._entries.move_to_end(key)
            while len(self._entries) > max(self.maxsize, 0) or \
                    (budget is not None and sum(self._weights.values()) > budget):
                self._forget(next(iter(self._entries)))
        return value

    def _forget(self, key: Hashable) -> None:
        self._entries.pop(key, None)
        self._weights.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._weights.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._entries


_SHARED = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
           types.MethodType, types.CodeType)


def deep_size(value, skip: tuple[type, ...] = ()) -> int:
    """Bytes held by ``value`` and every object it reaches (each counted once), measured with
    ``sys.getsizeof``; classes, modules, functions and instances of ``skip`` (shared with the
    rest of the process) are not followed. ``deep_size([b"ab"]) > deep_size([])``."""
    seen: set[int] = set()
    stack, total = [value], 0
    while stack:
        item = stack.pop()
        if id(item) in seen or isinstance(item, _SHARED) or (skip and isinstance(item, skip)):
            continue
        seen.add(id(item))
        total += sys.getsizeof(item, 0)
        stack.extend(gc.get_referents(item))
    return total
