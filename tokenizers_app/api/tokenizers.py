"""``/api/tokenizers``: tokenizers, versions (by number or alias), downloads, encoding, imports,
and the staff's alias moves and lifecycle changes."""

from typing import Literal

from django.conf import settings
from django.http import HttpResponse
from ninja import File, Form, Query, Router, Schema, Status
from ninja.files import UploadedFile

from ..services.versions import IMPORT_FORMATS
from ..downloads import artifact_response
from ..bpe.special_tokens import check_special_lists
from ..errors import Invalid, NotFound, TooLarge
from ..models import Corpus, Tokenizer, TokenizerVersion
from ..services.deletions import delete_tokenizer
from ..services.downloads import render_download
from ..services.evaluations import cancel_evaluation, request_evaluation
from ..services.gates import find_alias, goldens_kept, pin_golden, set_gate
from ..services.staff import deprecate_version, move_alias, publish_version
from ..services.import_notes import pattern_note, special_tokens_from_json
from ..services.versions import import_tokenizer
from ..shapes import (
    AliasOut,
    GoldenOut,
    EvaluationOut,
    TokenizerOut,
    VersionDetailOut,
    VersionImportOut,
    VersionOut,
)
from .auth import READ, WRITE
from .body import Body, unknown_form_fields
from .errors import ERRORS
from .paging import MAX_PAGE, MAX_PAGE_SIZE, TokenizerPage, VersionPage, page_of

router = Router(tags=["tokenizers"])
Format = Literal[tuple(IMPORT_FORMATS)]  # type: ignore[valid-type]
BINARY = {"200": {"description": "the artifact's bytes (a zip for multi-file formats)",
                  "content": {"application/octet-stream":
                              {"schema": {"type": "string", "format": "binary"}}}}}
JSON = "application/json; charset=utf-8"


def _tokenizers():
    return Tokenizer.objects.with_latest().prefetch_related("aliases__version").order_by("name")


def _version(name: str, ref: str) -> TokenizerVersion:
    return (TokenizerVersion.objects.select_related("tokenizer", "training_run", "created_by")
            .prefetch_related("aliases").resolve(f"{name}@{ref}"))


@router.get("", response={200: TokenizerPage, **ERRORS}, auth=READ)
def list_tokenizers(request, page: int = Query(1, ge=1, le=MAX_PAGE),
                    page_size: int = Query(50, ge=1, le=MAX_PAGE_SIZE)):
    return page_of(_tokenizers(), page, page_size, TokenizerOut.of)


@router.get("/{name}", response={200: TokenizerOut, **ERRORS}, auth=READ)
def get_tokenizer(request, name: str):
    tokenizer = _tokenizers().filter(name=name).first()
    if tokenizer is None:
        raise NotFound(f"no tokenizer named {name!r}")
    return TokenizerOut.of(tokenizer)


@router.delete("/{name}", response={204: None, **ERRORS}, auth=WRITE)
def remove_tokenizer(request, name: str):
    """Delete a tokenizer that has no version and no run (204): its owner or staff (403 for
    anyone else); 409 saying what depends on it. Versions are never deleted: deprecate them."""
    tokenizer = Tokenizer.objects.filter(name=name).first()
    if tokenizer is None:
        raise NotFound(f"no tokenizer named {name!r}")
    delete_tokenizer(tokenizer=tokenizer, user=request.user)
    return Status(204, None)


@router.get("/{name}/versions", response={200: VersionPage, **ERRORS}, auth=READ)
def list_versions(request, name: str, page: int = Query(1, ge=1, le=MAX_PAGE),
                  page_size: int = Query(50, ge=1, le=MAX_PAGE_SIZE)):
    if not Tokenizer.objects.filter(name=name).exists():
        raise NotFound(f"no tokenizer named {name!r}")
    versions = (TokenizerVersion.objects.filter(tokenizer__name=name).latest_first()
                .select_related("tokenizer", "training_run", "created_by")
                .prefetch_related("aliases"))
    return page_of(versions, page, page_size, VersionOut.of)


@router.get("/{name}/versions/{ref}", response={200: VersionDetailOut, **ERRORS}, auth=READ)
def get_version(request, name: str, ref: str):
    return VersionDetailOut.of(_version(name, ref))


@router.get("/{name}/versions/{ref}/download", response=ERRORS, auth=READ,
            openapi_extra={"responses": BINARY})
def download(request, name: str, ref: str, format: Format = "hf"):
    """The artifact's bytes, byte-identical for identical requests; ``ETag`` is their sha256,
    ``If-None-Match`` with it answers 304."""
    version = TokenizerVersion.objects.select_related("tokenizer").resolve(f"{name}@{ref}")
    return artifact_response(request, render_download(version=version, format=format))


class EncodeIn(Body):
    """``allowed_special`` and ``disallowed_special`` as in tiktoken: special-token text that is
    allowed becomes its id; text of a disallowed one (``"all"``: every one not allowed) is
    refused; any other (``"disallowed_special": []``) is encoded as plain text. Each list holds
    at most the version's special tokens and 64 other strings (4,096 characters in all): more
    is a 413 in words."""

    text: str
    allowed_special: list[str] | Literal["all"] = []
    disallowed_special: list[str] | Literal["all"] = "all"


class EncodeOut(Schema):
    """The encode answer's shape, for the OpenAPI document. The answer is not built from this
    class (validating and dumping thousands of tokens costs more than joining them): its
    one writer is ``TokenTable.encoding_json``, whatever the kind, and
    tests/api/test_encode_shape.py checks real answers of every kind against this schema."""

    ids: list[int]
    tokens: list[str]
    spans: list[tuple[int, int]]


@router.post("/{name}/versions/{ref}/encode", response={200: EncodeOut, **ERRORS}, auth=READ)
def encode(request, name: str, ref: str, body: EncodeIn):
    """``ids`` as ``encode(text, allowed_special, disallowed_special)`` gives them (special-token
    text that is disallowed is refused, as tiktoken does; with ``"disallowed_special": []`` the
    ids are those of ``encode_ordinary``), ``tokens`` as readable text, ``spans`` as byte
    offsets into the UTF-8 text."""
    if len(body.text) > settings.API_ENCODE_MAX_CHARS:
        raise TooLarge(f"the text holds {len(body.text)} characters; encode at most "
                       f"{settings.API_ENCODE_MAX_CHARS} per request (API_ENCODE_MAX_CHARS)",
                       field="text")
    check_text(body.text)
    # the row's digest alone (its other columns are read only if this process loads it)
    tokenizer = TokenizerVersion.objects.digest_only(name, ref).cached_tokenizer()
    check_special_lists(tokenizer.special_tokens, allowed_special=body.allowed_special,
                        disallowed_special=body.disallowed_special)
    allowed = body.allowed_special if body.allowed_special == "all" else set(body.allowed_special)
    # EncodeOut as JSON, joined by TokenTable.encoding_json from texts kept per loaded version
    return HttpResponse(tokenizer.encoding_json(body.text, allowed_special=allowed,
                                                disallowed_special=body.disallowed_special),
                        content_type=JSON)


def check_text(text: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise Invalid(f"the text holds a lone surrogate (U+{ord(text[exc.start]):04X}) at "
                      f"character {exc.start}: it is not valid Unicode text",
                      field="text") from None


@router.post("/{name}/import", response={201: VersionImportOut, **ERRORS}, auth=WRITE)
def import_files(request, name: str, files: list[UploadedFile] = File(...),
                 format: Form[Format | None] = None, pattern: Form[str | None] = None,
                 special_tokens: Form[str | None] = None):
    """A new version from tokenizer files in any format the core reads (the format is detected
    when not given); the same content as an existing version gives that version. GPT-2 files
    hold no pattern: ``pattern`` names it (``gpt2`` assumed), and ``pattern_note`` says which.
    A bare tiktoken rank file takes ``pattern`` (a name, a regex, or a published encoding such
    as ``cl100k_base``) and ``special_tokens`` (a JSON object, ``{"<|endoftext|>": 50256}``),
    unless it is a published encoding's file (recognised by its sha256).
    A form field other than these four is a 422."""
    unknown = unknown_form_fields(request, {"files", "format", "pattern", "special_tokens"})
    if unknown:
        return Status(422, {"detail": unknown})
    if sum(upload.size for upload in files) > settings.TOKENIZER_IMPORT_MAX_BYTES:
        raise TooLarge(f"tokenizer files over {settings.TOKENIZER_IMPORT_MAX_BYTES} bytes are "
                       f"refused (TOKENIZER_IMPORT_MAX_BYTES)", field="files")
    contents = {upload.name: upload.read() for upload in files}
    version = import_tokenizer(files=contents, tokenizer_name=name, format=format,
                               pattern=pattern, created_by=request.user,
                               special_tokens=special_tokens_from_json(special_tokens),
                               source_detail=f"imported over HTTP from "
                                             f"{', '.join(u.name for u in files)}")
    note = pattern_note(version=version, files=contents, format=format, pattern=pattern)
    return Status(201, VersionImportOut.of(_version(name, str(version.number)), pattern_note=note))


class EvaluateIn(Body):
    corpus: str  # the name of an evaluation corpus


@router.post("/{name}/versions/{ref}/evaluate", response={200: EvaluationOut, **ERRORS},
             auth=WRITE)
def evaluate(request, name: str, ref: str, body: EvaluateIn):
    """Evaluate the version on an evaluation corpus: its evaluation there (``status`` queued
    until a worker computes it; one per version and corpus, a failed one is queued again)."""
    [corpus] = Corpus.objects.by_names([body.corpus])
    return EvaluationOut.of(request_evaluation(version=_version(name, ref), corpus=corpus))


@router.post("/{name}/versions/{ref}/evaluate/cancel", response={200: EvaluationOut, **ERRORS},
             auth=WRITE)
def cancel_evaluation_on(request, name: str, ref: str, body: EvaluateIn):
    """Cancel the version's evaluation on a corpus (``status`` cancelled; an ended one is
    answered as it is): the tokenizer's owner, the corpus's uploader or staff. Evaluating it
    again queues it anew."""
    evaluation = _version(name, ref).evaluations.select_related("corpus").filter(
        corpus__name=body.corpus).first()
    if evaluation is None:
        raise NotFound(f"{name}@{ref} has no evaluation on {body.corpus!r}")
    return EvaluationOut.of(cancel_evaluation(evaluation=evaluation, user=request.user))


class AliasIn(Body):
    version: int
    force_reason: str = ""  # staff: move past a gate that refuses it, saying why


@router.put("/{name}/aliases/{alias}", response={200: AliasOut, **ERRORS}, auth=WRITE)
def put_alias(request, name: str, alias: str, body: AliasIn):
    """Point an alias at a version (staff only); every move is recorded. A gated alias answers
    409 naming each failed check (ids kept, goldens, metrics) unless ``force_reason`` is
    given; the move then records the checks and the reason."""
    moved = move_alias(version=_version(name, str(body.version)), name=alias, user=request.user,
                       force_reason=body.force_reason)
    last = moved.moves.order_by("-moved_at", "-id").first()
    return AliasOut(tokenizer=name, alias=moved.name, version=moved.version.number,
                    gate_tolerance=moved.gate_tolerance,
                    gate_checks=last.gate_checks if last else [],
                    forced_reason=last.forced_reason if last else "")


class GateIn(Body):
    tolerance: float | None  # a share (0.01: 1%); null lifts the gate


@router.put("/{name}/aliases/{alias}/gate", response={200: AliasOut, **ERRORS}, auth=WRITE)
def put_gate(request, name: str, alias: str, body: GateIn):
    """Gate an alias (staff only): a move must keep every id, every golden, and every headline
    metric within ``tolerance`` of the current target's."""
    gated = set_gate(alias=find_alias(tokenizer_name=name, name=alias),
                     tolerance=body.tolerance, user=request.user)
    return AliasOut(tokenizer=name, alias=gated.name, version=gated.version.number,
                    gate_tolerance=gated.gate_tolerance)


class GoldenIn(Body):
    version: int  # the version whose ids are pinned
    text: str


@router.post("/{name}/goldens", response={201: GoldenOut, **ERRORS}, auth=WRITE)
def post_golden(request, name: str, body: GoldenIn):
    """Pin a golden text with the ids a version gives it (the owner or staff)."""
    golden = pin_golden(version=_version(name, str(body.version)), text=body.text,
                        user=request.user)
    return Status(201, GoldenOut.of(golden, kept=True))


class GoldensOut(Schema):
    version: str  # NAME@NUMBER asked about
    goldens: list[GoldenOut]


@router.get("/{name}/versions/{ref}/goldens", response={200: GoldensOut, **ERRORS}, auth=READ)
def version_goldens(request, name: str, ref: str):
    """Each golden of the tokenizer, and whether this version keeps it (gives the pinned ids)."""
    version = _version(name, ref)
    return GoldensOut(version=version.label, goldens=[
        GoldenOut.of(golden, kept) for golden, kept in goldens_kept(version)])


@router.post("/{name}/versions/{ref}/publish", response={200: VersionOut, **ERRORS}, auth=WRITE)
def publish(request, name: str, ref: str):
    return VersionOut.of(publish_version(version=_version(name, ref), user=request.user))


@router.post("/{name}/versions/{ref}/deprecate", response={200: VersionOut, **ERRORS}, auth=WRITE)
def deprecate(request, name: str, ref: str):
    return VersionOut.of(deprecate_version(version=_version(name, ref), user=request.user))
