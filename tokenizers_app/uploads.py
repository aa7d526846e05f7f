"""Corpus uploads staged while the request body arrives, for the upload page and the API.

``CorpusUploadMiddleware`` runs before anything reads the body (CSRF included): an upload larger
than ``CORPUS_MAX_BYTES`` is answered 413 at once, and any other gets ``StagingUploadHandler``,
which feeds the ``file`` field to a ``CorpusStager`` (checked as UTF-8, hashed, written to disk)
block by block, so the web process never holds the file. Tokenizer files to import over
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
from django.http import HttpResponse, JsonResponse

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
            if length > settings.CORPUS_MAX_BYTES + FORM_SLACK:
                return too_large(kind, length, "CORPUS_MAX_BYTES", "split the corpus")
            request.upload_handlers = [StagingUploadHandler(request)]
        elif TOKENIZER_IMPORT.match(request.path) and \
                length > settings.TOKENIZER_IMPORT_MAX_BYTES + FORM_SLACK:
            return too_large("api", length, "TOKENIZER_IMPORT_MAX_BYTES",
                              "send smaller tokenizer files")
        return self.get_response(request)


def too_large(kind: str, length: int, setting: str, advice: str):
    message = (f"the upload is {length} bytes, over the limit of {getattr(settings, setting)} "
               f"bytes (setting {setting}): {advice}, or raise the limit")
    if kind == "api":
        return JsonResponse({"detail": message}, status=413)
    return HttpResponse(message, status=413, content_type="text/plain; charset=utf-8")


def staged_upload(request):
    """``(the staged upload or None, the ValueError that stopped it or None)``."""
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
    UTF-8, too large) stops the upload and is kept in ``error`` for the form or the API."""

    def __init__(self, request=None):
        super().__init__(request)
        self.stager, self.error = None, None

    def new_file(self, field_name, file_name, *args, **kwargs):
        super().new_file(field_name, file_name, *args, **kwargs)
        if field_name == "file":
            self.stager = CorpusStager()
            raise StopFutureHandlers()

    def receive_data_chunk(self, raw_data, start):
        if self.stager is None:
            return raw_data
        try:
            self.stager.write(raw_data)
        except ValueError as exc:
            self._fail(exc)
        return None

    def file_complete(self, file_size):
        if self.stager is None:
            return None
        try:
            staged = self.stager.finish()
        except ValueError as exc:
            self._fail(exc)
        return StagedUpload(self.file_name, staged)

    def upload_interrupted(self):
        if self.stager is not None:
            self.stager.discard()

    def _fail(self, error: ValueError):
        self.stager.discard()
        self.stager, self.error = None, error
        raise StopUpload(connection_reset=False)
