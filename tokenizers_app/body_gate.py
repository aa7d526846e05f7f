"""Bodies refused or never staged before a request is allowed: ``BodyGateMiddleware`` runs before
anything reads a body (the sign-in throttle reads the form's username, the CSRF check its token),
so that an anonymous multipart POST of gigabytes to the sign-in page, ``/runs/new/`` or a
tokenizer import is answered without a byte of it written to the temp folder. Corpus uploads
have their own gate (``uploads``)."""

import re

from django.conf import settings
from django.contrib.auth import get_user
from django.contrib.auth.views import redirect_to_login
from django.core.files.uploadhandler import FileUploadHandler, SkipFile
from django.db import InterfaceError, OperationalError

from .guards import database_gone, refusal
from .uploads import FORM_SLACK, TOKENIZER_IMPORT, UPLOAD_PATHS

PARALLEL_UPLOAD = re.compile(r"^(/api/parallel-sets|/parallel/upload/)$")  # a file, read whole


class BodyGateMiddleware:
    """Before anything reads a body (the sign-in throttle reads the form's username; CSRF reads
    its token): a request to an address that takes no file never stages one (its files are
    skipped, never written to the temp folder) and its body is refused over the form's limit
    (``DATA_UPLOAD_MAX_MEMORY_SIZE`` and the framing) by its ``Content-Length``, unread; an
    import of tokenizer files is refused unread unless its caller signed in or sent a valid API
    key."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.method in ("GET", "HEAD", "OPTIONS", "TRACE"):
            return self.get_response(request)
        path, length = request.path, _length(request)
        if TOKENIZER_IMPORT.match(path) or PARALLEL_UPLOAD.match(path):
            if PARALLEL_UPLOAD.match(path) and length > settings.PARALLEL_MAX_BYTES + FORM_SLACK:
                return refusal(request, f"the request's body is {length} bytes, over "
                                        f"PARALLEL_MAX_BYTES ({settings.PARALLEL_MAX_BYTES}): "
                                        f"split the parallel set", 413)
            try:
                known = _caller_known(request)
            except (OperationalError, InterfaceError) as error:
                return database_gone(request, error)
            if not known:
                if not path.startswith("/api/"):
                    return redirect_to_login(request.get_full_path())
                return refusal(request, "sign in or send an API key (Authorization: Bearer "
                                        "...) to import files", 401)
        elif path not in UPLOAD_PATHS:
            most = (settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 0) + FORM_SLACK
            if length > most:
                return refusal(request, f"the request's body is {length} bytes; {path} takes a "
                                        f"form or JSON of at most {most} bytes (setting "
                                        f"DATA_UPLOAD_MAX_MEMORY_SIZE) and no file", 413)
            request.upload_handlers = [NoFiles(request)]
        return self.get_response(request)


def _length(request) -> int:
    try:
        return max(int(request.META.get("CONTENT_LENGTH") or 0), 0)
    except ValueError:  # Django reads such a body as empty
        return 0


def _caller_known(request) -> bool:
    """A valid API key, or a signed-in session (read before the auth middleware runs)."""
    header = request.META.get("HTTP_AUTHORIZATION", "")
    if header.startswith("Bearer "):
        from .models import ApiKey

        return ApiKey.objects.authenticate(header[len("Bearer "):].strip()) is not None
    return get_user(request).is_authenticated


class NoFiles(FileUploadHandler):
    """The upload handler of an address that takes no file: a file in its form is skipped, its
    bytes read and dropped, never staged."""

    def new_file(self, *args, **kwargs):
        raise SkipFile

    def receive_data_chunk(self, raw_data, start):
        return None

    def file_complete(self, file_size):
        return None
