"""``/api/corpora``: list, read, and upload corpora (streamed to disk and checked as they
arrive, once the caller's key or session passed, by ``uploads``, with the same rules as the upload
page; what a refused upload staged is removed before the answer leaves)."""

from ninja import File, Form, Query, Router, Status
from ninja.files import UploadedFile

from ..errors import Invalid
from ..models import Corpus
from ..services.corpora import import_staged_corpus
from ..services.deletions import delete_corpus
from ..shapes import CorpusOut, CorpusUploadOut
from ..uploads import staged_upload
from .auth import READ, WRITE
from .body import unknown_form_fields
from .errors import ERRORS
from .paging import MAX_PAGE, MAX_PAGE_SIZE, CorpusPage, page_of

router = Router(tags=["corpora"])


@router.get("", response={200: CorpusPage, **ERRORS}, auth=READ)
def list_corpora(request, page: int = Query(1, ge=1, le=MAX_PAGE),
                 page_size: int = Query(50, ge=1, le=MAX_PAGE_SIZE)):
    return page_of(Corpus.objects.order_by("name"), page, page_size, CorpusOut.of)


@router.get("/{name}", response={200: CorpusOut, **ERRORS}, auth=READ)
def get_corpus(request, name: str):
    [corpus] = Corpus.objects.by_names([name])
    return CorpusOut.of(corpus)


@router.delete("/{name}", response={204: None, **ERRORS}, auth=WRITE)
def remove_corpus(request, name: str):
    """Delete a corpus that no run trained on and no evaluation was computed on, with its file
    (204): its uploader or staff (403 for anyone else); 409 saying what depends on it."""
    [corpus] = Corpus.objects.by_names([name])
    delete_corpus(corpus=corpus, user=request.user)
    return Status(204, None)


@router.post("", response={201: CorpusUploadOut, 200: CorpusUploadOut, **ERRORS}, auth=WRITE)
def upload_corpus(request, name: Form[str], evaluation: Form[bool] = False,
                  language: Form[str] = "", file: File[UploadedFile] = None):
    """A UTF-8 text file as a corpus (201); the same bytes as an existing corpus give that
    corpus (200), with ``name_not_used`` saying so when it has another name. A form field other
    than these four is a 422 (and nothing is kept)."""
    upload, error = staged_upload(request)
    if error is not None:
        raise error
    unknown = unknown_form_fields(request, {"name", "evaluation", "language", "file"})
    if unknown:  # what it staged goes, as for any refused upload
        request.upload_gate.discard()
        return Status(422, {"detail": unknown})
    if upload is None:
        raise Invalid("send the corpus as a multipart form with a 'file' field (UTF-8 text)",
                      field="file")
    corpus, created = import_staged_corpus(
        staged=upload.staged, name=name, original_filename=upload.name,
        uploaded_by=request.user, is_evaluation=evaluation, language=language)
    return Status(201 if created else 200, CorpusUploadOut.of(corpus, asked_name=name))
