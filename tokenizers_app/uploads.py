"""Corpus uploads, for the upload page and the API: no byte of one is written before the request
is allowed, and whatever a refused request staged is gone before its answer leaves.

``CorpusUploadMiddleware`` (before CSRF) gives an upload request one ``UploadGate`` as its upload
handler, and removes what the gate staged and nobody stored once the answer is made, whatever the
answer (a refusal of the form, of the API's schema, a database that does not answer...).
Whoever reads the body first reads it through the gate: the CSRF check (``csrfmiddlewaretoken``
is a form field), the API's session check, or the view. Until the request is allowed the gate
reads the form's fields and stops where the first file begins, keeping what it read (the fields
and one block: a few KB). ``allow_upload(request)`` opens the gate: on the page once sign-in and
CSRF passed (``receives_upload``), in the API once the key or the session passed (``api.auth``).
Then the ``file`` field streams block by block to a ``CorpusStager`` (checked as UTF-8, hashed,
written to the store: ``MEDIA_ROOT``, or a bucket part by part): read now if the body was not read yet, or read again from its
start (the kept bytes, then the rest) if the check read it up to the file.

A corpus over ``CORPUS_MAX_BYTES`` is 413 wherever that is found: from ``Content-Length`` (over
the limit and the form's slack) before the body is read, or while it streams (``errors.TooLarge``
from the stager). The API answers the first at once; the page reads only the form's fields (not
the file) and shows the reason on its form, with 413. Tokenizer files to import over
``TOKENIZER_IMPORT_MAX_BYTES`` are answered 413 the same way, before their body is read.
"""

import functools
import io
import re

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.core.files.uploadedfile import UploadedFile
from django.core.files.uploadhandler import FileUploadHandler, StopFutureHandlers, StopUpload
from django.http.multipartparser import MultiPartParser

from .errors import REFUSALS, Invalid, RegistryError, TooLarge
from .guards import OVER_SIZE, refusal
from .services.corpora import CorpusStager

UPLOAD_PATHS = {"/corpora/upload/": "page", "/api/corpora": "api"}
TOKENIZER_IMPORT = re.compile(r"^(/api/tokenizers/[^/]+/import|/tokenizers/import/)$")  # refused by size up front
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
            request.upload_gate = gate = UploadGate(request, refused=refused)
            request.upload_handlers = [gate]
            try:
                return self.get_response(request)
            finally:
                gate.discard()  # stored corpora were moved away: this removes only the refused
        if TOKENIZER_IMPORT.match(request.path):
            if length > settings.TOKENIZER_IMPORT_MAX_BYTES + FORM_SLACK:
                refused = too_large(length, "TOKENIZER_IMPORT_MAX_BYTES",
                                    "send smaller tokenizer files")
                return refusal(request, str(refused), refused.status)
            # the same gate: a signed-in caller whose CSRF token fails stages no file either
            request.upload_gate = gate = UploadGate(request, files_to=_django_handlers)
            request.upload_handlers = [gate]
        return self.get_response(request)


def _django_handlers(gate: "UploadGate") -> list:
    """Once an import is allowed its files are read as Django reads any (in memory, or the
    temp folder past ``FILE_UPLOAD_MAX_MEMORY_SIZE``), behind the gate's check."""
    from django.core.files.uploadhandler import load_handler

    return [HeldFiles(gate)] + [load_handler(path, gate.request)
                                for path in settings.FILE_UPLOAD_HANDLERS]


def too_large(length: int, setting: str, advice: str) -> TooLarge:
    return TooLarge(f"the upload is {length} bytes, over the limit of "
                    f"{getattr(settings, setting)} bytes (setting {setting}): {advice}, or raise "
                    f"the limit")


def allow_upload(request) -> None:
    """The request passed its checks (sign-in and CSRF, or the API's key): its corpus may now be
    staged. Without an upload gate (not an upload) this does nothing."""
    gate = getattr(request, "upload_gate", None)
    if gate is not None:
        gate.allow()


def receives_upload(view):
    """A page view that takes an upload: the gate opens when the view is reached, that is after
    the CSRF check and the decorators above this one (``login_required``)."""
    @functools.wraps(view)
    def opened(request, *args, **kwargs):
        try:
            allow_upload(request)  # the files are read now: Django's limits on them apply
        except (TooManyFilesSent, TooManyFieldsSent) as exc:
            return refusal(request, OVER_SIZE[type(exc)](), 413)
        return view(request, *args, **kwargs)
    return opened


def staged_upload(request):
    """``(the staged upload or None, the error that stopped it or None)``: a ``RegistryError``
    (``TooLarge`` past ``CORPUS_MAX_BYTES``, ``Invalid`` for a second file) or the core's
    ``ValueError`` (not UTF-8, say). Reads the body (through the gate) if nothing has yet."""
    gate = getattr(request, "upload_gate", None)
    if gate is None:
        return None, None
    request.POST  # noqa: B018 - parses the body, if nothing did yet
    return gate.upload, gate.error


class StagedUpload(UploadedFile):
    """The uploaded corpus, already staged (hashed, checked, on disk) by the handler."""

    def __init__(self, name: str, staged):
        super().__init__(file=None, name=name, size=staged.size_bytes)
        self.staged = staged


class ReplayableBody:
    """The request body as a parser reads it. What is read while ``keeping`` is kept, so that
    ``rewind`` can serve the body again from its start: the kept bytes, then the rest. What comes
    before the file is the form's fields (at most ``DATA_UPLOAD_MAX_MEMORY_SIZE``) and framing:
    past that and ``FORM_SLACK``, the body is refused (``RequestDataTooBig``), not kept."""

    def __init__(self, stream):
        self.stream, self.kept, self.keeping, self.replay = stream, [], True, None
        self.kept_bytes = 0

    def read(self, size: int = -1) -> bytes:
        if self.replay is not None:
            data = self.replay.read(size)
            if data:
                return data
            self.replay = None
        data = self.stream.read(size)
        if self.keeping:
            self.kept.append(data)
            self.kept_bytes += len(data)
            if self.kept_bytes > (settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 0) + FORM_SLACK:
                raise RequestDataTooBig(
                    f"the form holds over {self.kept_bytes} bytes before its file, more than "
                    f"the fields may (setting DATA_UPLOAD_MAX_MEMORY_SIZE)")
        return data

    def rewind(self) -> None:
        """Serve the body again from its start; keep nothing more."""
        self.replay, self.kept, self.keeping = io.BytesIO(b"".join(self.kept)), [], False

    def forget(self) -> None:
        """Keep nothing more, and drop what was kept: the body will not be read again."""
        self.kept, self.keeping = [], False


class UploadGate(FileUploadHandler):
    """The one upload handler of a corpus upload request: it parses the body itself
    (``handle_raw_input``), staging the ``file`` field only once ``allow`` was called, and it
    holds everything this request staged, so that ``discard`` removes what was not stored.
    ``refused``: an error known before the body is read (too large by its header): the fields
    before the file are read, the file is not."""

    def __init__(self, request, refused: RegistryError | None = None, files_to=None):
        """``files_to(gate)``: the handlers of the reading once allowed (by default the corpus's
        ``StagingUploadHandler``)."""
        super().__init__(request)
        self.files_to = files_to or (lambda gate: [StagingUploadHandler(gate)])
        self.allowed, self.stopped_at_file = False, False
        self.body, self.meta, self.encoding = None, None, None
        self.stagers, self.upload, self.error = [], None, refused

    def handle_raw_input(self, input_data, META, content_length, boundary, encoding=None):
        self.body, self.meta, self.encoding = ReplayableBody(input_data), META, encoding
        self.body.keeping = not self.allowed
        return self._parse()

    def allow(self) -> None:
        """Open the gate. If a check read the body up to the file, read it again, staging."""
        self.allowed = True
        if self.body is None:  # not read yet: it will be read once, staging
            return
        if not self.stopped_at_file:  # read whole (no file in it): nothing to read again
            self.body.forget()
            return
        self.stopped_at_file = False
        self.body.rewind()
        self.request.POST, self.request._files = self._parse()

    def _parse(self):
        return MultiPartParser(self.meta, self.body, self.files_to(self), self.encoding).parse()

    def discard(self) -> None:
        """Remove every file this request staged and did not store (a stored one was moved)."""
        for stager in self.stagers:
            stager.discard()

    def refuse(self, error: Exception) -> None:
        self.discard()
        self.upload, self.error = None, error


class HeldFiles(FileUploadHandler):
    """First of the handlers behind a gate that stages nothing itself: before the gate opens,
    the reading stops where the first file begins (the fields are kept for the check); after,
    the files go on to the handlers behind it."""

    def __init__(self, gate: UploadGate):
        super().__init__(gate.request)
        self.gate = gate

    def new_file(self, *args, **kwargs):
        if not self.gate.allowed:
            self.gate.stopped_at_file = True
            raise StopUpload(connection_reset=True)

    def receive_data_chunk(self, raw_data, start):
        return raw_data

    def file_complete(self, file_size):
        return None


class StagingUploadHandler(FileUploadHandler):
    """One reading of the body for the gate: feeds the ``file`` field's bytes to a
    ``CorpusStager`` as they arrive, if the gate is open. A problem (not UTF-8, too large, a
    second file) stops the upload; the gate keeps it in ``error`` for the form or the API."""

    def __init__(self, gate: UploadGate):
        super().__init__(gate.request)
        self.gate, self.stager = gate, None

    def new_file(self, field_name, file_name, *args, **kwargs):
        super().new_file(field_name, file_name, *args, **kwargs)
        gate = self.gate
        if not gate.allowed:  # the check comes first: keep the fields, read no file yet
            gate.stopped_at_file = True
            raise StopUpload(connection_reset=True)
        if field_name != "file":
            return
        if gate.error is not None:  # refused from the header: read no more of the body
            raise StopUpload(connection_reset=True)
        if gate.upload is not None or gate.stagers:
            self._fail(Invalid("send one corpus per upload: the form holds a second 'file' "
                               "field", field="file"))
        self.stager = CorpusStager()
        gate.stagers.append(self.stager)
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
        self.gate.upload = StagedUpload(self.file_name, staged)
        self.stager = None
        return self.gate.upload

    def upload_interrupted(self):
        if self.stager is not None:
            self.stager.discard()

    def _fail(self, error: Exception):
        self.stager = None
        self.gate.refuse(error)
        raise StopUpload(connection_reset=False)
