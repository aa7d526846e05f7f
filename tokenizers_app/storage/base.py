"""What every store offers: the interface the rest of the registry calls."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO


@dataclass(frozen=True)
class Entry:
    """A stored object: its name, size in bytes and last change (seconds since the epoch)."""

    name: str
    size: int
    modified: float


class Writer:
    """Takes an object's bytes block by block; the object exists only after ``commit``.
    Used as a context manager it commits on a clean exit and aborts on an exception."""

    name: str

    def write(self, data: bytes) -> None:
        raise NotImplementedError

    def commit(self) -> None:
        raise NotImplementedError

    def abort(self) -> None:
        """Drop what was written; never raises (a leftover is the sweep's)."""
        raise NotImplementedError

    def __enter__(self) -> Writer:
        return self

    def __exit__(self, kind, error, traceback) -> None:
        if kind is None:
            self.commit()
        else:
            self.abort()


class Store:
    """Files by name: written whole, read whole, streamed or by byte range, listed, deleted.
    Callers never ask which store they have: what differs is behind these methods."""

    def describe(self) -> str:
        raise NotImplementedError

    def check(self) -> None:
        """Raise ``StoreUnavailable`` saying why the store cannot be used."""

    def create(self) -> bool:
        """Make the store ready (create the bucket, or the folder); False if it was."""
        raise NotImplementedError

    def writer(self, name: str) -> Writer:
        raise NotImplementedError

    def write_bytes(self, name: str, data: bytes) -> None:
        with self.writer(name) as writer:
            writer.write(data)

    def open(self, name: str) -> BinaryIO:
        """The object as a binary stream read as it arrives (close it)."""
        raise NotImplementedError

    def read_range(self, name: str, start: int, end: int) -> bytes:
        """Bytes ``[start, end)`` of the object (fewer past its end)."""
        raise NotImplementedError

    def read_bytes(self, name: str) -> bytes:
        with self.open(name) as stream:
            return stream.read()

    def size(self, name: str) -> int:
        raise NotImplementedError

    def exists(self, name: str) -> bool:
        raise NotImplementedError

    def move(self, source: str, target: str) -> None:
        """Give ``source``'s bytes the name ``target`` (replacing it, at once) and drop
        ``source``."""
        raise NotImplementedError

    def delete(self, name: str) -> None:
        """Remove an object; a missing one is no error."""
        raise NotImplementedError

    def delete_prefix(self, prefix: str) -> None:
        """Remove every object whose name starts with ``prefix`` (a folder: end it with /)."""
        raise NotImplementedError

    def list(self, prefix: str = "") -> Iterator[Entry]:
        """The objects whose name starts with ``prefix``, ``.part`` leftovers included."""
        raise NotImplementedError

    def abort_unfinished(self, older_than: float) -> list[str]:
        """Drop writes that were begun before ``older_than`` (epoch seconds) and never
        finished, which ``list`` does not show; the names they were for."""
        return []

    def local_path(self, name: str):
        """A path on this machine's disk holding the object, or None (a remote store)."""
        return None


def clean_name(name: str) -> str:
    """A store name: relative, ``/``-separated, with no ``..``; ``ValueError`` otherwise."""
    name = str(name).replace("\\", "/")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if not parts or name.startswith("/") or ".." in parts:
        raise ValueError(f"not a store name: {name!r} (a relative path with no '..')")
    return "/".join(parts)


class ObjectRanges:
    """Byte ranges of a stored object, as the core's ``plan_ranges`` and ``count_range`` read
    them (``bpe.counting.FileRanges`` is the local file's twin): one ranged read each."""

    def __init__(self, store: Store, name: str, size: int):
        self.store, self.object_name, self.size = store, name, size
        self.name = str(store.local_path(name) or name)  # in the core's messages

    def read(self, start: int, end: int) -> bytes:
        return self.store.read_range(self.object_name, start, min(end, self.size))
