"""One bounded cache for what a process keeps in memory (loaded tokenizers, rendered downloads):
least recently used forgotten first, safe to share between a server's threads. Plain Python.

``functools.lru_cache`` does not fit these: their bound is a setting read on each use (tests and
deployments change it), and a download's entry is checked against its file before it is used.
"""

from __future__ import annotations

import threading
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

    def __init__(self, maxsize: int | Callable[[], int]):
        self._maxsize = maxsize
        self._entries: OrderedDict[Hashable, V] = OrderedDict()
        self._lock = threading.Lock()

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
        """Keep ``value`` for ``key``, forgetting the least recently used beyond the bound."""
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > max(self.maxsize, 0):
                self._entries.popitem(last=False)
        return value

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._entries
