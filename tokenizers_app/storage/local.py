"""Files under ``MEDIA_ROOT`` on this machine's disk: the default store."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from django.conf import settings

from .base import Entry, Store, Writer, clean_name


class LocalStore(Store):
    """``MEDIA_ROOT`` (read from the settings on each call). Writes go to a ``.part`` file
    beside the target, fsynced, then renamed over it."""

    @property
    def root(self) -> Path:
        return Path(settings.MEDIA_ROOT)

    def describe(self) -> str:
        return f"MEDIA_ROOT {self.root}"

    def create(self) -> bool:
        existed = self.root.is_dir()
        self.root.mkdir(parents=True, exist_ok=True)
        return not existed

    def local_path(self, name: str) -> Path:
        return self.root / clean_name(name)

    def writer(self, name: str) -> Writer:
        return LocalWriter(name, self.local_path(name))

    def open(self, name: str):
        return open(self.local_path(name), "rb")

    def read_range(self, name: str, start: int, end: int) -> bytes:
        with self.open(name) as stream:
            stream.seek(start)
            return stream.read(max(0, end - start))

    def size(self, name: str) -> int:
        return os.path.getsize(self.local_path(name))

    def exists(self, name: str) -> bool:
        return self.local_path(name).is_file()

    def move(self, source: str, target: str) -> None:
        path = self.local_path(target)
        path.parent.mkdir(parents=True, exist_ok=True)
        os.replace(self.local_path(source), path)

    def delete(self, name: str) -> None:
        self.local_path(name).unlink(missing_ok=True)

    def delete_prefix(self, prefix: str) -> None:
        if prefix.endswith("/"):
            folder = self.local_path(prefix)
            shutil.rmtree(folder, ignore_errors=True)
            try:
                folder.parent.rmdir()  # when nothing else is left in it
            except OSError:
                pass
            return
        for entry in list(self.list(prefix)):
            self.delete(entry.name)

    def list(self, prefix: str = ""):
        root = self.root
        folder = root / prefix.rsplit("/", 1)[0] if "/" in prefix else root
        if not folder.is_dir():
            return
        for path in sorted(folder.rglob("*")):
            name = path.relative_to(root).as_posix()
            if not name.startswith(prefix):
                continue
            try:
                if path.is_file():
                    stat = path.stat()
                    yield Entry(name, stat.st_size, stat.st_mtime)
            except FileNotFoundError:  # moved or removed meanwhile
                continue


class LocalWriter(Writer):
    def __init__(self, name: str, path: Path):
        self.name, self.path = name, path
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.",
                                             suffix=".part")
        self.temporary, self.out = Path(temporary), os.fdopen(handle, "wb")

    def write(self, data: bytes) -> None:
        self.out.write(data)

    def commit(self) -> None:
        try:
            self.out.flush()
            os.fsync(self.out.fileno())
            self.out.close()
            os.replace(self.temporary, self.path)
        except BaseException:
            self.abort()
            raise

    def abort(self) -> None:
        try:
            self.out.close()
        except OSError:
            pass
        self.temporary.unlink(missing_ok=True)

