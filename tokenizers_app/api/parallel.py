"""``/api/parallel-sets``: list and read parallel sets, upload one (a TSV, JSON Lines or ``.po``
zip, the same rules as the page), and the premium of every version per language (the numbers
the set's page and ``manage.py parity`` show)."""

from __future__ import annotations

from datetime import datetime

from ninja import File, Form, Query, Router, Schema, Status
from ninja.files import UploadedFile

from ..errors import Invalid
from ..models import ParallelSet, TokenizerVersion
from ..services.parallel import import_parallel_set
from ..services.parity import as_json, parity
from .auth import READ, WRITE
from .errors import ERRORS
from .paging import MAX_PAGE, MAX_PAGE_SIZE, Page, page_of

router = Router(tags=["parallel sets"])


class ParallelSetOut(Schema):
    name: str
    pivot: str  # BCP 47
    languages: list[str]  # the pivot first
    corpora: dict[str, str]  # language -> corpus name
    line_count: int  # aligned lines, the same in every language
    dropped_lines: int  # missing in some language, dropped from all
    skipped: dict[str, int]  # messages skipped while reading, by reason
    source_format: str  # tsv, jsonl, po, corpora
    created_at: datetime

    @classmethod
    def of(cls, parallel_set) -> ParallelSetOut:
        corpora = parallel_set.corpora()
        return cls(name=parallel_set.name, pivot=parallel_set.pivot,
                   languages=parallel_set.languages(),
                   corpora={lang: corpus.name for lang, corpus in corpora.items()},
                   line_count=parallel_set.line_count, dropped_lines=parallel_set.dropped_lines,
                   skipped=parallel_set.skipped, source_format=parallel_set.source_format,
                   created_at=parallel_set.created_at)


class LanguageScoreOut(Schema):
    language: str
    status: str  # queued, running, succeeded, failed, missing
    tokens: int | None
    premium: float | None  # tokens / the pivot's tokens, the same lines
    compression_ratio: float | None  # bytes/token
    tokens_per_word: float | None  # whitespace-delimited words
    unknown_rate: float | None
    byte_fallback_rate: float | None


class VersionParityOut(Schema):
    version: str
    worst_premium: float | None
    worst_language: str | None
    median_premium: float | None
    share_within: float | None  # of the non-pivot languages, premium <= within
    languages: dict[str, LanguageScoreOut]


class ParityOut(Schema):
    set: str
    pivot: str
    languages: list[str]
    within: float
    tokens_per_word_not_meaningful: list[str]  # written mostly without spaces
    versions: list[VersionParityOut]


class ParallelSetPage(Page):
    items: list[ParallelSetOut]


@router.get("", response={200: ParallelSetPage, **ERRORS}, auth=READ)
def list_parallel_sets(request, page: int = Query(1, ge=1, le=MAX_PAGE),
                       page_size: int = Query(50, ge=1, le=MAX_PAGE_SIZE)):
    return page_of(ParallelSet.objects.order_by("name"), page, page_size, ParallelSetOut.of)


@router.post("", response={201: ParallelSetOut, **ERRORS}, auth=WRITE)
def upload_parallel_set(request, name: Form[str], pivot: Form[str] = "en",
                        file: File[UploadedFile] = None):
    """A TSV, JSON Lines or zip of ``.po`` files as a parallel set (201); each language becomes
    an evaluation corpus ``NAME.LANGUAGE``."""
    if file is None:
        raise Invalid("send the set as a multipart form with a 'file' field", field="file")
    created = import_parallel_set(data=file.read(), name=name, pivot=pivot,
                                  original_filename=file.name or "", uploaded_by=request.user)
    return Status(201, ParallelSetOut.of(created))


@router.get("/{name}", response={200: ParallelSetOut, **ERRORS}, auth=READ)
def get_parallel_set(request, name: str):
    return ParallelSetOut.of(ParallelSet.objects.named(name))


@router.get("/{name}/parity", response={200: ParityOut, **ERRORS}, auth=READ)
def get_parity(request, name: str, versions: str = ""):
    """The premium per language of ``versions`` (comma-separated ``NAME@REF``; by default every
    version evaluated on the set)."""
    chosen = TokenizerVersion.objects.resolve_many(versions, most=50) if versions else None
    return as_json(parity(parallel_set=ParallelSet.objects.named(name), versions=chosen))
