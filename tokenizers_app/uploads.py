"""Corpus uploads staged while the request body arrives, for the upload page and the API.

``CorpusUploadMiddleware`` runs before anything reads the body (CSRF included) and gives an
upload ``StagingUploadHandler``, which feeds the ``file`` field to a ``CorpusStager`` (checked as
UTF-8, hashed, written to disk) block by block, so the web process never holds the file. A corpus
over ``CORPUS_MAX_BYTES`` is 413 wherever that is found: from ``Content-Length`` (over the limit
and the form's slack) before the body is read, or while it streams (``errors.TooLarge`` from the
stager). The API answers the first at once; the page reads only the form's fields before the file
(not the file) and shows the reason on its form, with 413. Tokenizer files to import over
``TOKENIZER_IMPORT_MAX_BYTES`` are answered 413 the same way, before their body is read.
"""

import re

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.core.files.uploadhandler import (
    FileUploadHandler,
    StopFutureHandlers,
    StopUpload,
)

from .errors import REFUSALS, RegistryError, TooLarge
from .guards import refusal
from .services.corpora import CorpusStager

UPLOAD_PATHS = {"/corpora/upload/": "page", "/api/corpora": "api"}
TOKENIZER_IMPORT = re.compile(r"^/api/tokenizers/[^/]+/import$")  # refused by size up front
FORM_SLACK = 1 << 20  # the other form fields and the multipart framing


class CorpusUploadMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        kind = UPLOAD_PATHS.get(request.path)
        if request.method != "POST":
            return self.get_response(request)
        length = int(request.META.get("CONTENT_LENGTH") or 0)
        if kind:
            refused = None
            if length > settings.CORPUS_MAX_BYTES + FORM_SLACK:
                refused = too_large(length, "CORPUS_MAX_BYTES", "split the corpus")
                if kind == "api":
                    return refusal(request, str(refused), refused.status)
            request.upload_handlers = [StagingUploadHandler(request, refused=refused)]
        elif TOKENIZER_IMPORT.match(request.path) and \
                length > settings.TOKENIZER_IMPORT_MAX_BYTES + FORM_SLACK:
            refused = too_large(length, "TOKENIZER_IMPORT_MAX_BYTES",
                                "send smaller tokenizer files")
            return refusal(request, str(refused), refused.status)
        return self.get_response(request)


def too_large(length: int, setting: str, advice: str) -> TooLarge:
    return TooLarge(f"the upload is {length} bytes, over the limit of "
                    f"{getattr(settings, setting)} bytes (setting {setting}): {advice}, or raise "
                    f"the limit")


def staged_upload(request):
    """``(the staged upload or None, the error that stopped it or None)``: a ``RegistryError``
    (``TooLarge`` past ``CORPUS_MAX_BYTES``) or the core's ``ValueError`` (not UTF-8, say)."""
    handler = request.upload_handlers[0] if request.upload_handlers else None
    error = handler.error if isinstance(handler, StagingUploadHandler) else None
    upload = request.FILES.get("file")
    return (upload if isinstance(upload, StagedUpload) else None), error


class StagedUpload(UploadedFile):
    """The uploaded corpus, already staged (hashed, checked, on disk) by the handler."""

    def __init__(self, name: str, staged):
        super().__init__(file=None, name=name, size=staged.size_bytes)
        self.staged = staged


class StagingUploadHandler(FileUploadHandler):
    """Feeds the ``file`` field's bytes to a ``CorpusStager`` as they arrive. A problem (not
    UTF-8, too large) stops the upload and is kept in ``error`` for the form or the API.
    ``refused``: an error known before the body is read; the fields before the file are read,
    the file is not."""

    def __init__(self, request=None, refused: RegistryError | None = None):
        super().__init__(request)
        self.stager, self.error = None, refused

    def new_file(self, field_name, file_name, *args, **kwargs):
        super().new_file(field_name, file_name, *args, **kwargs)
        if field_name != "file":
            return
        if self.error is not None:  # refused from the header: read no more of the body
            raise StopUpload(connection_reset=True)
        self.stager = CorpusStager()
        raise StopFutureHandlers()

    def receive_data_chunk(self, raw_data, start):
        if self.stager is None:
            return raw_data
        try:
            self.stager.write(raw_data)
        except REFUSALS as exc:
            self._fail(exc)
        return None

    def file_complete(self, file_size):
        if self.stager is None:
            return None
        try:
            staged = self.stager.finish()
        except REFUSALS as exc:
            self._fail(exc)
        return StagedUpload(self.file_name, staged)

    def upload_interrupted(self):
        if self.stager is not None:
            self.stager.discard()

    def _fail(self, error: Exception):
        self.stager.discard()
        self.stager, self.error = None, error
        raise StopUpload(connection_reset=False)
