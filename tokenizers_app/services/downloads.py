"""Downloads: a version's files in one format, rendered once per digest into the store under
``exports/`` as the single file (a zip for multi-file formats) that is served, and its gzip;
``damaged_downloads`` checks them for ``manage.py verify``. The store is the only place they
are kept, and this module never asks which store it has."""

from __future__ import annotations

import gzip
import hashlib
from dataclasses import dataclass

from ..bpe.formats import FORMATS, check_format
from ..bpe.formats.archive import download_file
from ..caches import BoundedCache
from ..engines import FILE, KINDS
from ..engines.registry import library_formats
from ..errors import Invalid, room_checked
from ..models import TokenizerVersion
from ..storage import get_store

NOTHING_WRITTEN = "nothing was written"  # a full disk (NoRoom, 507): no file, whole or part


def render_tokenizer_files(*, version: TokenizerVersion, format: str) -> dict[str, bytes]:
    """The files of a version in ``format``, rendered from the version itself. Nothing is
    kept beside the store: what is served is the download ``render_download`` stores once per
    digest, whichever store it is."""
    check_download_format(version, format)
    name = version.tokenizer.name
    tokenizer = version.load_tokenizer(web=True)
    return version.kind.files(tokenizer, format, name)


def download_formats(kind: str) -> tuple[str, ...]:
    """The formats a version of ``kind`` downloads as."""
    return KINDS[kind].downloads if kind in KINDS else FORMATS


LAYOUT_FORMATS = ("tekken",)  # hold only ids laid out as special tokens, bytes, then merges


def version_download_formats(version: TokenizerVersion) -> tuple[str, ...]:
    """The formats this version downloads as: its kind's, less those its ids cannot be laid out
    in (tekken numbers special tokens first, then every other token without a gap)."""
    formats = download_formats(version.algorithm)
    if version.kind.may_have_standard_layout and not version.standard_layout:
        formats = tuple(format for format in formats if format not in LAYOUT_FORMATS)
    return formats


def check_download_format(version: TokenizerVersion, format: str) -> None:
    """Refuse (naming the formats that work) a format this version's kind cannot be written in:
    the core's kinds have theirs (``bpe.formats.check_format``), ``hf`` and ``sentencepiece``
    versions their own; a format its ids cannot be laid out in (``version_download_formats``)."""
    if version.kind.stored_in != FILE and format not in library_formats():
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
    if kept is not None and store.exists(kept.name):
        return kept  # (an object removed by hand meanwhile: read the record again)
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
    if not (store.exists(artifact.name) and store.exists(artifact.gzip_name)):
        return None  # an object removed by hand: render again
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
