"""Storing a corpus: streamed to the store (``tokenizers_app.storage``: ``MEDIA_ROOT``, or a
bucket in multipart upload, one part in memory), hashed and checked as strict UTF-8 on the way,
then moved into place under a content name and registered. The same bytes give back the existing
corpus; bad input leaves neither a file nor a row, and so does a store that does not answer."""

from __future__ import annotations

import logging

from django.db import IntegrityError, transaction

from ..errors import Conflict, Forbidden, room_checked
from ..models import Corpus, check_language, check_name
from ..storage import get_store
from .evaluations import evaluate_everything_on
from .permissions import OPERATOR, check_may_switch_evaluation, may_switch_evaluation, recorded
from .staging import NOT_STORED, CorpusStager, StagedCorpus, forget_staged, stage_corpus

__all__ = ["CorpusStager", "StagedCorpus", "import_corpus", "import_staged_corpus",
           "set_evaluation", "set_language", "stage_corpus"]

log = logging.getLogger(__name__)

def import_corpus(*, stream, name: str, original_filename: str = "", uploaded_by=OPERATOR,
                  is_evaluation: bool = False, language: str = "") -> Corpus:
    """Store a corpus read from a binary stream. The same bytes give back the existing corpus.

    The bytes are streamed to a temporary file, hashed and UTF-8-validated on the way; the row is
    created only at the end, so bad input (not UTF-8, empty, over ``CORPUS_MAX_BYTES``) leaves
    nothing behind.
    """
    check_name("corpus", name, field="name")
    check_language(language)
    return import_staged_corpus(staged=stage_corpus(stream), name=name,
                                original_filename=original_filename, uploaded_by=uploaded_by,
                                is_evaluation=is_evaluation, language=language)[0]


def import_staged_corpus(*, staged: StagedCorpus, name: str, original_filename: str = "",
                         uploaded_by=OPERATOR, is_evaluation: bool = False,
                         language: str = "") -> tuple[Corpus, bool]:
    """``(corpus, created)``: register a corpus whose bytes were already staged (by
    ``stage_corpus``, or by an upload handler feeding a ``CorpusStager`` as the request body
    arrives); the staged object is moved into place or removed. The same bytes as an existing
    corpus give that corpus (``created`` false). ``language`` (a BCP 47 tag) is recorded on a
    new corpus, and on an existing one that has none."""
    try:
        check_name("corpus", name, field="name")
        language = check_language(language)
        corpus, created = _register_corpus(
            staged, name=name, original_filename=original_filename, uploaded_by=uploaded_by,
            is_evaluation=is_evaluation, language=language)
        if language and not corpus.language:
            corpus.set_language(language)
        return corpus, created
    finally:
        forget_staged(staged.name)


def _register_corpus(staged: StagedCorpus, *, name, original_filename, uploaded_by,
                     is_evaluation, language) -> tuple[Corpus, bool]:
    existing = Corpus.objects.filter(sha256=staged.sha256).first()
    created = False
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
                    object_name=stored, sha256=staged.sha256, size_bytes=staged.size_bytes,
                    line_count=staged.line_count, char_count=staged.char_count,
                    scripts=staged.scripts, language=language,
                    uploaded_by=recorded(uploaded_by))
            created = True
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
    return existing, created


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


def set_language(*, corpus: Corpus, language: str, user=OPERATOR) -> Corpus:
    """Record a corpus's language (BCP 47; "" for none): its uploader or staff only, as for the
    evaluation flag (``Forbidden`` otherwise)."""
    language = check_language(language)
    if not may_switch_evaluation(user, corpus):
        raise Forbidden(f"corpus {corpus.name!r} can have its language changed only by its "
                        f"uploader or staff", field="language")
    corpus.set_language(language)
    return corpus


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
