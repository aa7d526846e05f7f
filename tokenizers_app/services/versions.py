"""Versions: add one (numbered, with all its rows, or the existing one with the same digest),
register a vocabulary sweep, import tokenizer files; staff publish, deprecate and annotate
versions and move aliases; downloads are rendered once per digest."""

from __future__ import annotations

import gzip
import hashlib
import shutil
import tempfile
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import regex
from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from ..bpe import Tokenizer as CoreTokenizer
from ..bpe.atomic_files import write_file, write_files
from ..bpe.canonical import content_digest
from ..bpe.formats import check_format, dumps_tokenizer, loads_tokenizer
from ..bpe.formats.archive import download_file
from ..bpe.pattern_check import check_pattern
from ..bpe.training import check_sweep, prefix_tokenizer
from ..models import (
    Algorithm,
    Alias,
    AliasMove,
    Corpus,
    Tokenizer,
    TokenizerVersion,
    check_name,
)
from .evaluations import queue_evaluation


def add_version(*, tokenizer: Tokenizer, core: CoreTokenizer, source: str, digest: str = "",
                source_detail: str = "", training_run=None, created_by=None) -> TokenizerVersion:
    """The version of ``tokenizer`` holding ``core``: the existing one with the same digest, or a
    new one numbered next, with all its rows. Call it inside a transaction."""
    digest = digest or content_digest(core)
    Tokenizer.objects.select_for_update().filter(pk=tokenizer.pk).first()  # one numberer at a time
    existing = TokenizerVersion.objects.filter(tokenizer=tokenizer, digest=digest).first()
    if existing is not None:
        return existing
    latest = tokenizer.versions.aggregate(latest=Max("number"))["latest"] or 0
    version = TokenizerVersion.objects.create(
        tokenizer=tokenizer, number=latest + 1, algorithm=core.algorithm, pattern=core.pattern,
        special_tokens=core.special_tokens, vocab_size=len(core.vocab),
        merge_count=len(core.merges), digest=digest, source=source,
        source_detail=source_detail[:255], training_run=training_run, created_by=created_by)
    version.write_contents(core)
    version.mark_ready()
    for corpus in Corpus.objects.for_evaluation():
        queue_evaluation(version=version, corpus=corpus)
    return version


def register_sweep(*, version: TokenizerVersion, vocab_sizes, created_by=None
                   ) -> list[TokenizerVersion]:
    """Register versions for smaller vocab sizes from the merge prefixes of a trained version."""
    sizes = check_sweep(vocab_sizes, version.vocab_size, len(version.special_tokens))
    full = version.load_tokenizer()
    cores = [prefix_tokenizer(full, size) for size in sizes]
    with transaction.atomic():
        return [add_version(tokenizer=version.tokenizer, core=core, source=version.source,
                            source_detail=f"first {len(core.merges)} merges of {version.label}",
                            training_run=version.training_run, created_by=created_by)
                for core in cores]


def import_tokenizer(*, files: dict[str, bytes], tokenizer_name: str, format: str | None = None,
                     source_detail: str = "", created_by=None) -> TokenizerVersion:
    """A version from tokenizer files in any format the core reads (detected when not given);
    the same content as an existing version of the tokenizer gives that version back. A custom
    pattern is tried on adversarial inputs first (``check_pattern``): one that backtracks
    without end is refused."""
    check_name("tokenizer", tokenizer_name)
    core = loads_tokenizer(files, format)
    if core.algorithm != Algorithm.BYTE_BPE:
        raise ValueError(f"the registry keeps byte-level BPE tokenizers; these files hold a "
                         f"{core.algorithm} tokenizer")
    check_pattern(core.pattern)
    detail = source_detail or f"imported from {', '.join(sorted(files))}"
    with transaction.atomic():
        tokenizer, _ = Tokenizer.objects.get_or_create(name=tokenizer_name)
        return add_version(tokenizer=tokenizer, core=core, source=TokenizerVersion.Source.IMPORT,
                           source_detail=detail, created_by=created_by)


# -- staff: lifecycle and aliases -------------------------------------------------------------

def _require_staff(user, action: str) -> None:
    if user is None or not user.is_active or not user.is_staff:
        raise PermissionDenied(f"only staff can {action}")


def set_version_lifecycle(*, version: TokenizerVersion, lifecycle: str, user
                          ) -> TokenizerVersion:
    """Publish or deprecate a version (or return it to draft): staff only."""
    _require_staff(user, f"mark versions {lifecycle}")
    if lifecycle not in TokenizerVersion.Lifecycle.values:
        raise ValueError(f"lifecycle must be one of {', '.join(TokenizerVersion.Lifecycle.values)}"
                         f", got {lifecycle!r}")
    version.lifecycle = lifecycle
    version.save(update_fields=["lifecycle"])
    return version


def publish_version(*, version: TokenizerVersion, user) -> TokenizerVersion:
    return set_version_lifecycle(version=version, lifecycle=TokenizerVersion.Lifecycle.PUBLISHED,
                                 user=user)


def deprecate_version(*, version: TokenizerVersion, user) -> TokenizerVersion:
    return set_version_lifecycle(version=version, lifecycle=TokenizerVersion.Lifecycle.DEPRECATED,
                                 user=user)


def annotate_version(*, version: TokenizerVersion, notes: str, user) -> TokenizerVersion:
    _require_staff(user, "annotate versions")
    version.notes = notes
    version.save(update_fields=["notes"])
    return version


_ALIAS = regex.compile(r"[a-z][a-z0-9_-]{0,49}")


def check_alias_name(name) -> str:
    """``check_alias_name("production") -> "production"``; names that could be read as a version
    number, or hold other characters, raise ValueError."""
    if not isinstance(name, str) or not _ALIAS.fullmatch(name):
        raise ValueError(f"alias {name!r} is not valid: use 1-50 lowercase letters, digits, '_' or "
                         f"'-', starting with a letter")
    return name


def move_alias(*, version: TokenizerVersion, name: str, user) -> Alias:
    """Point the alias ``name`` of the version's tokenizer at ``version`` (creating it), and
    record the move: staff only."""
    _require_staff(user, "move aliases")
    check_alias_name(name)
    if version.status != TokenizerVersion.Status.READY:
        raise ValueError(f"version {version.label} is not ready")
    with transaction.atomic():
        alias = Alias.objects.select_for_update().filter(tokenizer=version.tokenizer_id,
                                                         name=name).first()
        previous = alias.version if alias else None
        if previous == version:
            return alias
        if alias is None:
            alias = Alias(tokenizer=version.tokenizer, name=name)
        alias.version, alias.moved_by, alias.moved_at = version, user, timezone.now()
        alias.save()
        AliasMove.objects.create(alias=alias, from_version=previous, to_version=version,
                                 moved_by=user, moved_at=alias.moved_at)
    return alias


# -- downloads --------------------------------------------------------------------------------

def render_tokenizer_files(*, version: TokenizerVersion, format: str) -> dict[str, bytes]:
    """The files of a version in ``format``, cached under ``MEDIA_ROOT/exports`` by digest."""
    check_format(format)
    name = version.tokenizer.name
    folder = Path(settings.MEDIA_ROOT) / "exports" / version.digest / format / name
    if folder.is_dir():
        return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}
    files = dumps_tokenizer(version.load_tokenizer(), format, name)
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=folder.parent))
    try:
        write_files(staging, files)
    except BaseException:  # a full disk: nothing of it stays
        shutil.rmtree(staging, ignore_errors=True)
        raise
    try:
        staging.rename(folder)
    except OSError:  # another process cached it first
        shutil.rmtree(staging, ignore_errors=True)
    return files


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


_DOWNLOADS: OrderedDict[tuple[str, str, str], Download] = OrderedDict()
_DOWNLOADS_LOCK = threading.Lock()
KEPT_DOWNLOADS = 256  # per process, the least recently served forgotten first


def render_download(*, version: TokenizerVersion, format: str) -> Download:
    """The version in ``format`` as one file (a zip for multi-file formats), byte-identical for
    identical versions: rendered once per digest and format into ``MEDIA_ROOT/exports``; this
    process then remembers its path and sha256, so serving it again reads no rows."""
    key = (version.digest, format, version.tokenizer.name)
    with _DOWNLOADS_LOCK:
        if key in _DOWNLOADS and _DOWNLOADS[key].path.is_file():
            _DOWNLOADS.move_to_end(key)
            return _DOWNLOADS[key]
    files = render_tokenizer_files(version=version, format=format)
    file_name, data = download_file(files, version.tokenizer.name, format)
    folder = Path(settings.MEDIA_ROOT) / "exports" / version.digest / format / "download"
    path = folder / f"{version.tokenizer.name}-{file_name}"
    artifact = Download(file_name, path, hashlib.sha256(data).hexdigest())
    if not (path.is_file() and artifact.gzip_path.is_file()):
        folder.mkdir(parents=True, exist_ok=True)
        # mtime=0: the same gzip bytes each time
        write_file(artifact.gzip_path, gzip.compress(data, 9, mtime=0))
        write_file(path, data)
    with _DOWNLOADS_LOCK:
        _DOWNLOADS[key] = artifact
        while len(_DOWNLOADS) > KEPT_DOWNLOADS:
            _DOWNLOADS.popitem(last=False)
    return artifact
