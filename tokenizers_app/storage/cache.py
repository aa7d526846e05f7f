"""A local file for an object, for code that needs a path: a worker counting a whole corpus in
several processes. From the local store that is the file itself. From a bucket the object is
streamed to this machine's disk, hashed on the way and checked against its sha256, and kept in a
cache folder by sha256 while the cache holds at most ``STORAGE_CACHE_BYTES`` (the least recently
used go first); with no room (or a budget of 0) the copy is removed after use."""

from __future__ import annotations

import hashlib
import os
import tempfile
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings

from ..errors import Damaged

BLOCK = 1 << 20


@contextmanager
def local_copy(store, name: str, sha256: str, size: int):
    """``with local_copy(store, corpus.object_name, corpus.sha256, corpus.size_bytes) as path:``"""
    path = store.local_path(name)
    if path is not None:
        yield path
        return
    folder = cache_folder()
    folder.mkdir(parents=True, exist_ok=True)
    budget = settings.STORAGE_CACHE_BYTES
    cached = folder / f"{sha256}.txt"
    if size <= budget:
        if cached.is_file():
            os.utime(cached)  # recently used
        else:
            _fetch(store, name, sha256, cached, folder)
            _evict(folder, budget, keep=cached)
        yield cached
        return
    temporary = _fetch(store, name, sha256, None, folder)
    try:
        yield temporary
    finally:
        temporary.unlink(missing_ok=True)


def cache_folder() -> Path:
    return Path(settings.STORAGE_CACHE_DIR or Path(settings.MEDIA_ROOT) / "cache")


def _fetch(store, name: str, sha256: str, target: Path | None, folder: Path) -> Path:
    """Stream the object into ``folder`` (a ``.part`` file until it checks out)."""
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{sha256[:16]}.", suffix=".part")
    temporary = Path(temporary)
    try:
        digest = hashlib.sha256()
        with os.fdopen(handle, "wb") as out, store.open(name) as stream:
            while block := stream.read(BLOCK):
                digest.update(block)
                out.write(block)
        if digest.hexdigest() != sha256:
            raise Damaged(f"{name} in {store.describe()} is not what was stored (sha256 "
                          f"{digest.hexdigest()[:12]}…, not {sha256[:12]}…); run manage.py "
                          f"verify")
        if target is None:
            return temporary
        os.replace(temporary, target)
        return target
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _evict(folder: Path, budget: int, keep: Path) -> None:
    """Remove the least recently used copies until the cache holds at most ``budget`` bytes."""
    copies = []
    for path in folder.glob("*.txt"):
        try:
            stat = path.stat()
        except FileNotFoundError:
            continue
        copies.append((stat.st_mtime, stat.st_size, path))
    total = sum(size for _, size, _ in copies)
    for _, size, path in sorted(copies):
        if total <= budget:
            return
        if path != keep:
            path.unlink(missing_ok=True)
            total -= size
