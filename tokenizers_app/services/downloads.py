"""Downloads: a version's files in one format, rendered once per digest under ``exports/`` in
the store (``MEDIA_ROOT``, or the bucket), and the single file (a zip for multi-file formats)
that is served; ``damaged_downloads`` checks them for ``manage.py verify``."""

from __future__ import annotations

import gzip
import hashlib
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from ..bpe.atomic_files import write_files
from ..bpe.formats import FORMATS, KIND_FORMATS, check_format, dumps_tokenizer
from ..bpe.formats.archive import download_file
from ..caches import BoundedCache
from ..engines import DOWNLOAD_FORMATS, ENGINE_KINDS, engine_files
from ..errors import Invalid, room_checked
from ..models import TokenizerVersion
from ..storage import get_store

NOTHING_WRITTEN = "nothing was written"  # a full disk (NoRoom, 507): no file, whole or part


def render_tokenizer_files(*, version: TokenizerVersion, format: str) -> dict[str, bytes]:
    """The files of a version in ``format``, cached under ``MEDIA_ROOT/exports`` by digest
    (with a bucket as the store: rendered anew; the download is what is kept there)."""
    check_download_format(version, format)
    name = version.tokenizer.name
    folder = Path(settings.MEDIA_ROOT) / "exports" / version.digest / format / name
    if get_store().kind == "local" and folder.is_dir():
        return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}
    tokenizer = version.load_tokenizer(web=True)
    files = (engine_files(tokenizer, format, name) if version.algorithm in ENGINE_KINDS
             else dumps_tokenizer(tokenizer, format, name))
    if get_store().kind != "local":
        return files
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
    return DOWNLOAD_FORMATS.get(kind) or KIND_FORMATS.get(kind, FORMATS)


LAYOUT_FORMATS = ("tekken",)  # hold only ids laid out as special tokens, bytes, then merges


def version_download_formats(version: TokenizerVersion) -> tuple[str, ...]:
    """The formats this version downloads as: its kind's, less those its ids cannot be laid out
    in (tekken numbers special tokens first, then every other token without a gap)."""
    formats = download_formats(version.algorithm)
    if version.algorithm == "byte_bpe" and not version.standard_layout:
        formats = tuple(format for format in formats if format not in LAYOUT_FORMATS)
    return formats


def check_download_format(version: TokenizerVersion, format: str) -> None:
    """Refuse (naming the formats that work) a format this version's kind cannot be written in:
    the core's kinds have theirs (``bpe.formats.check_format``), ``hf`` and ``sentencepiece``
    versions their own; a format its ids cannot be laid out in (``version_download_formats``)."""
    if version.algorithm not in ENGINE_KINDS and format not in DOWNLOAD_FORMATS["sentencepiece"]:
        check_format(format, version.algorithm)
        if format not in version_download_formats(version):
            raise Invalid(f"{version.label} cannot be written as {format}: it numbers special "
                          f"tokens first, then the 256 bytes and one id per merge, and this "
                          f"version's ids do not; download it as one of "
                          f"{', '.join(version_download_formats(version))}", field="format")
        return
    formats = download_formats(version.algorithm)
    if format not in formats:
        raise Invalid(f"a {version.algorithm} version downloads as {', '.join(formats)}; "
                      f"not {format}", field="format")


@dataclass(frozen=True)
class Download:
    """A version's files in one format as one stored object (``name``), and the same bytes
    gzipped beside it (``gzip_name``) for clients that accept that encoding."""

    file_name: str
    name: str
    sha256: str
    size: int

    def record(self) -> bytes:
        """What ``<tokenizer>.sha256`` holds: ``sha256 size file_name name``."""
        return f"{self.sha256} {self.size} {self.file_name} {self.name}\n".encode()

    @classmethod
    def from_record(cls, record: bytes) -> Download:
        sha256, size, file_name, name = record.decode().strip().split(" ", 3)
        return cls(file_name, name, sha256, int(size))

    @property
    def gzip_name(self) -> str:
        return f"{self.name}.gz"


KEPT_DOWNLOADS = 256  # per process, the least recently served forgotten first
# (store, digest, format, tokenizer name) -> the rendered download, in this process
_DOWNLOADS: BoundedCache[Download] = BoundedCache(KEPT_DOWNLOADS)


def render_download(*, version: TokenizerVersion, format: str) -> Download:
    """The version in ``format`` as one file (a zip for multi-file formats), byte-identical for
    identical versions: rendered once per digest and format into the store (``exports/``),
    the file and its gzip first, then ``<file>.sha256`` holding its sha256 and size, written
    last: a download is complete when that exists. This process then remembers it, so serving
    it again reads no rows."""
    check_download_format(version, format)
    store = get_store()
    key = (store.describe(), version.digest, format, version.tokenizer.name)
    kept = _DOWNLOADS.get(key)
    if kept is not None and (store.kind != "local" or store.exists(kept.name)):
        return kept  # (in a bucket, objects named by digest do not change)
    folder = f"exports/{version.digest}/{format}/download/"
    record = f"{folder}{version.tokenizer.name}.sha256"
    artifact = _stored_download(store, record)
    if artifact is None:
        files = render_tokenizer_files(version=version, format=format)
        file_name, data = download_file(files, version.tokenizer.name, format)
        artifact = Download(file_name, f"{folder}{version.tokenizer.name}-{file_name}",
                            hashlib.sha256(data).hexdigest(), len(data))
        with room_checked(NOTHING_WRITTEN):
            # mtime=0: the same gzip bytes each time
            store.write_bytes(artifact.gzip_name, gzip.compress(data, 9, mtime=0))
            store.write_bytes(artifact.name, data)
            store.write_bytes(record, artifact.record())
    return _DOWNLOADS.put(key, artifact)


def _stored_download(store, record: str) -> Download | None:
    """The download rendered before (its ``.sha256`` record is written last), or None."""
    try:
        artifact = Download.from_record(store.read_bytes(record))
    except (FileNotFoundError, ValueError, UnicodeDecodeError):
        return None
    if store.kind == "local" and not (store.exists(artifact.name)
                                      and store.exists(artifact.gzip_name)):
        return None  # a file removed by hand: render again
    return artifact


def damaged_downloads():
    """``(object name, problem)`` for each stored download whose bytes are not the size and
    sha256 its ``.sha256`` record holds (``manage.py verify``)."""
    store = get_store()
    for entry in list(store.list("exports/")):
        if not entry.name.endswith(".sha256"):
            continue
        try:
            artifact = Download.from_record(store.read_bytes(entry.name))
            size, sha256 = object_digest(store, artifact.name)
        except FileNotFoundError:
            yield entry.name, f"download {entry.name}: its file is missing"
            continue
        except (ValueError, UnicodeDecodeError):
            yield entry.name, f"download {entry.name}: the record cannot be read"
            continue
        if (size, sha256) != (artifact.size, artifact.sha256):
            yield artifact.name, (f"download {artifact.name}: its file ({size} bytes, sha256 "
                                  f"{sha256[:12]}…) is not what was stored ({artifact.size} "
                                  f"bytes, sha256 {artifact.sha256[:12]}…)")


def object_digest(store, name: str) -> tuple[int, str]:
    """``(size, sha256)`` of a stored object, streamed."""
    digest, size = hashlib.sha256(), 0
    with store.open(name) as stream:
        while block := stream.read(1 << 20):
            digest.update(block)
            size += len(block)
    return size, digest.hexdigest()
