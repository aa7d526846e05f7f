"""Downloads: a version's files in one format, rendered once per digest under
``MEDIA_ROOT/exports``, and the single file (a zip for multi-file formats) that is served."""

from __future__ import annotations

import gzip
import hashlib
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from ..bpe.atomic_files import write_file, write_files
from ..bpe.formats import FORMATS, check_format, dumps_tokenizer
from ..bpe.formats.archive import download_file
from ..caches import BoundedCache
from ..engines import DOWNLOAD_FORMATS, ENGINE_KINDS, engine_files
from ..errors import Invalid, room_checked
from ..models import TokenizerVersion

NOTHING_WRITTEN = "nothing was written"  # a full disk (NoRoom, 507): no file, whole or part


def render_tokenizer_files(*, version: TokenizerVersion, format: str) -> dict[str, bytes]:
    """The files of a version in ``format``, cached under ``MEDIA_ROOT/exports`` by digest."""
    check_download_format(version, format)
    name = version.tokenizer.name
    folder = Path(settings.MEDIA_ROOT) / "exports" / version.digest / format / name
    if folder.is_dir():
        return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}
    tokenizer = version.load_tokenizer()
    files = (engine_files(tokenizer, format, name) if version.algorithm in ENGINE_KINDS
             else dumps_tokenizer(tokenizer, format, name))
    folder.parent.mkdir(parents=True, exist_ok=True)
    # a ".part" folder: what a killed render leaves, the sweep removes (``services.sweep``)
    staging = Path(tempfile.mkdtemp(dir=folder.parent, prefix=".staging-", suffix=".part"))
    try:
        with room_checked(NOTHING_WRITTEN):
            write_files(staging, files)
    except BaseException:  # a full disk: nothing of it stays
        shutil.rmtree(staging, ignore_errors=True)
        raise
    try:
        staging.rename(folder)
    except OSError:  # another process cached it first
        shutil.rmtree(staging, ignore_errors=True)
    return files


def download_formats(kind: str) -> tuple[str, ...]:
    """The formats a version of ``kind`` downloads as."""
    return DOWNLOAD_FORMATS.get(kind, FORMATS)


def check_download_format(version: TokenizerVersion, format: str) -> None:
    """``Invalid`` (naming the formats that work) for a format this version's kind cannot be
    written in: ``hf``/``transformers`` and ``sentencepiece`` versions have their own."""
    if version.algorithm in ENGINE_KINDS:
        formats = DOWNLOAD_FORMATS[version.algorithm]
    elif format in DOWNLOAD_FORMATS["sentencepiece"]:
        formats = FORMATS
    else:
        check_format(format)
        return
    if format not in formats:
        raise Invalid(f"a {version.algorithm} version downloads as {', '.join(formats)}; "
                      f"not {format}", field="format")


@dataclass(frozen=True)
class Download:
    """A version's files in one format as one file on disk (served with sendfile), and the same
    bytes gzipped beside it (``gzip_path``) for clients that accept that encoding."""

    file_name: str
    path: Path
    sha256: str

    @property
    def gzip_path(self) -> Path:
        return self.path.with_name(self.path.name + ".gz")


KEPT_DOWNLOADS = 256  # per process, the least recently served forgotten first
# (digest, format, tokenizer name) -> the rendered download, in this process
_DOWNLOADS: BoundedCache[Download] = BoundedCache(KEPT_DOWNLOADS)


def render_download(*, version: TokenizerVersion, format: str) -> Download:
    """The version in ``format`` as one file (a zip for multi-file formats), byte-identical for
    identical versions: rendered once per digest and format into ``MEDIA_ROOT/exports``; this
    process then remembers its path and sha256, so serving it again reads no rows."""
    key = (version.digest, format, version.tokenizer.name)
    kept = _DOWNLOADS.get(key)
    if kept is not None and kept.path.is_file():
        return kept
    files = render_tokenizer_files(version=version, format=format)
    file_name, data = download_file(files, version.tokenizer.name, format)
    folder = Path(settings.MEDIA_ROOT) / "exports" / version.digest / format / "download"
    path = folder / f"{version.tokenizer.name}-{file_name}"
    artifact = Download(file_name, path, hashlib.sha256(data).hexdigest())
    if not (path.is_file() and artifact.gzip_path.is_file()):
        with room_checked(NOTHING_WRITTEN):
            folder.mkdir(parents=True, exist_ok=True)
            # mtime=0: the same gzip bytes each time
            write_file(artifact.gzip_path, gzip.compress(data, 9, mtime=0))
            write_file(path, data)
    return _DOWNLOADS.put(key, artifact)
