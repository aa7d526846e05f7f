"""Storing a corpus: streamed to the store (``tokenizers_app.storage``: ``MEDIA_ROOT``, or a
bucket in multipart upload, one part in memory), hashed and checked as strict UTF-8 on the way,
then moved into place under a content name and registered. The same bytes give back the existing
corpus; bad input leaves neither a file nor a row, and so does a store that does not answer."""

from __future__ import annotations

import hashlib
import logging
import uuid
from dataclasses import dataclass

from django.conf import settings
from django.db import IntegrityError, transaction

from ..bpe.corpus import StrictUtf8
from ..bpe.corpus_stats import CorpusStats
from ..errors import Conflict, Invalid, TooLarge, room_checked
from ..models import Corpus, check_name
from ..storage import get_store
from .evaluations import evaluate_everything_on
from .permissions import OPERATOR, check_may_switch_evaluation, recorded

log = logging.getLogger(__name__)

READ_BYTES = 1 << 20
NOT_STORED = "the corpus was not stored and nothing of it was kept"


@dataclass
class StagedCorpus:
    """A validated upload in a temporary object of the store (``corpora/incoming/*.part``),
    with what was learned while streaming it."""

    name: str
    sha256: str
    size_bytes: int
    line_count: int
    char_count: int
    scripts: dict


def import_corpus(*, stream, name: str, original_filename: str = "", uploaded_by=OPERATOR,
                  is_evaluation: bool = False) -> Corpus:
    """Store a corpus read from a binary stream. The same bytes give back the existing corpus.

    The bytes are streamed to a temporary file, hashed and UTF-8-validated on the way; the row is
    created only at the end, so bad input (not UTF-8, empty, over ``CORPUS_MAX_BYTES``) leaves
    nothing behind.
    """
    check_name("corpus", name, field="name")
    return import_staged_corpus(staged=stage_corpus(stream), name=name,
                                original_filename=original_filename, uploaded_by=uploaded_by,
                                is_evaluation=is_evaluation)


def import_staged_corpus(*, staged: StagedCorpus, name: str, original_filename: str = "",
                         uploaded_by=OPERATOR, is_evaluation: bool = False) -> Corpus:
    """Register a corpus whose bytes were already staged (by ``stage_corpus``, or by an upload
    handler feeding a ``CorpusStager`` as the request body arrives); the staged object is moved
    into place or removed."""
    try:
        check_name("corpus", name, field="name")
        return _register_corpus(staged, name=name, original_filename=original_filename,
                                uploaded_by=uploaded_by, is_evaluation=is_evaluation)
    finally:
        _forget(staged.name)


def stage_corpus(stream) -> StagedCorpus:
    """Copy a binary stream to a temporary object of the store, validating as it goes."""
    stager = CorpusStager()
    try:
        while data := stream.read(READ_BYTES):
            if not isinstance(data, bytes):
                raise TypeError("the corpus stream must be binary: open the file with mode 'rb'")
            stager.write(data)
        return stager.finish()
    except BaseException:
        stager.discard()
        raise


class CorpusStager:
    """Takes a corpus's bytes block by block into a temporary object of the store (a file under
    ``MEDIA_ROOT``, or a multipart upload to the bucket): checked as strict UTF-8, hashed and
    counted on the way, refused past ``CORPUS_MAX_BYTES``. Nothing exists under its name until
    ``finish``; the caller discards it on any error (an aborted upload leaves no object)."""

    def __init__(self):
        self.name = f"corpora/incoming/{uuid.uuid4().hex}.part"
        self.out = get_store().writer(self.name)
        self.decoder = StrictUtf8("the corpus",
                                  hint="; convert the file to UTF-8 and import it again")
        self.digest, self.stats, self.size = hashlib.sha256(), CorpusStats(), 0
        self.has_text = False

    def write(self, data: bytes) -> None:
        cap = settings.CORPUS_MAX_BYTES
        if self.size + len(data) > cap:
            raise TooLarge(f"the corpus is larger than the limit of {cap} bytes (setting "
                           f"CORPUS_MAX_BYTES): split it, or raise the limit", field="file")
        if self.size == 0:
            self._check_start(data)
        if (nul := data.find(b"\x00")) >= 0:
            raise Invalid(f"the corpus holds a NUL byte at byte offset {self.size + nul}: it "
                          f"looks like a binary file, not text", field="file")
        self.has_text = self.has_text or bool(data.strip())
        self.stats.add(self.decoder.decode(data))
        self.digest.update(data)
        with room_checked(NOT_STORED):
            self.out.write(data)
        self.size += len(data)

    @staticmethod
    def _check_start(data: bytes) -> None:
        """Refuse what is recognisably not UTF-8 text from its first bytes, saying what it is."""
        if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
            raise Invalid("the corpus is UTF-16 (it starts with a UTF-16 byte-order mark), "
                          "not UTF-8: convert it to UTF-8 and import it again", field="file")
        if data[:2] == b"\x1f\x8b" or data[:4] == b"PK\x03\x04":
            raise Invalid("the corpus is a compressed file (gzip or zip), which is not "
                          "taken: upload the text itself", field="file")

    def finish(self) -> StagedCorpus:
        self.decoder.decode(b"", final=True)
        if self.size == 0:
            raise Invalid("the corpus is empty: the file holds no bytes", field="file")
        if not self.has_text:
            raise Invalid("the corpus holds only whitespace: there is no text to train on",
                          field="file")
        with room_checked(NOT_STORED):
            self.out.commit()
        self.finished = True
        return StagedCorpus(self.name, self.digest.hexdigest(), self.size, **self.stats.summary())

    finished = False

    def discard(self) -> None:
        self.out.abort()
        if self.finished:  # committed, and not moved into place by a registration
            _forget(self.name)


def _register_corpus(staged: StagedCorpus, *, name, original_filename, uploaded_by,
                     is_evaluation) -> Corpus:
    existing = Corpus.objects.filter(sha256=staged.sha256).first()
    if existing is None:
        if Corpus.objects.filter(name=name).exists():
            raise Conflict(f"a corpus named {name!r} already exists with other content: "
                           f"choose another name", field="name")
        stored = f"corpora/{staged.sha256}.txt"  # server-generated, content-addressed
        store = get_store()
        with room_checked(NOT_STORED):
            store.move(staged.name, stored)
        try:
            with transaction.atomic():
                existing = Corpus.objects.create(
                    name=name, original_filename=_plain_file_name(original_filename),
                    file=stored, sha256=staged.sha256, size_bytes=staged.size_bytes,
                    line_count=staged.line_count, char_count=staged.char_count,
                    scripts=staged.scripts, uploaded_by=recorded(uploaded_by))
        except IntegrityError:  # a concurrent import of the same bytes, or of the same name
            existing = Corpus.objects.filter(sha256=staged.sha256).first()
            if existing is None:
                store.delete(stored)  # no row holds these bytes: no file either
                raise Conflict(f"a corpus named {name!r} already exists: choose another name",
                               field="name")
        except BaseException:
            _remove_unless_registered(stored, staged.sha256)
            raise
    if is_evaluation and not existing.is_evaluation:
        set_evaluation(corpus=existing, is_evaluation=True, user=uploaded_by)
    return existing


def set_evaluation(*, corpus: Corpus, is_evaluation: bool, user=OPERATOR) -> Corpus:
    """Make ``corpus`` an evaluation corpus, or not: its uploader or staff only (``Forbidden``
    otherwise), as the flag changes every leaderboard. Made one, every ready version is queued
    for evaluation on it (``evaluate_everything_on``), and every new version will be."""
    check_may_switch_evaluation(user, corpus)
    with transaction.atomic():
        corpus.mark_evaluation(is_evaluation)
        if is_evaluation:
            evaluate_everything_on(corpus=corpus)
    return corpus


def _forget(name: str) -> None:
    """Remove a staged object that was not stored; a store that does not answer leaves it to
    the sweep (``.part`` objects go once old enough)."""
    try:
        get_store().delete(name)
    except Exception as exc:
        log.warning("staged corpus %s kept for the sweep: %s", name, exc)


def _remove_unless_registered(target: str, sha256: str) -> None:
    """Remove a corpus file that no row holds. When the database cannot say (it went away), the
    file stays for the periodic sweep, which removes corpus files without a row."""
    try:
        registered = Corpus.objects.filter(sha256=sha256).exists()
    except Exception:  # the database itself failed: the caller re-raises the first error
        log.warning("corpus file %s kept for the sweep: the database does not answer", target)
        return
    if not registered:
        get_store().delete(target)


def _plain_file_name(name: str) -> str:
    """The uploaded file's own name, for display only: no folders (``../``), no control
    characters, at most 255 characters. (The stored file's name is the sha256.)"""
    name = name.replace("\\", "/").rsplit("/", 1)[-1]
    return "".join(c for c in name if c.isprintable())[:255]
