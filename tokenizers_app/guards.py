"""Requests refused before any view runs, and errors no view answered, in words: ``refusal`` is
the one answer for both (JSON ``{"detail": ...}`` under ``/api/``, plain text for pages).

A NUL byte in the address (no name in the registry holds one, and Postgres cannot even compare
text that does) is a 400 with the reason. A registry error a page met and did not answer itself
gets the status of its class (``errors.RegistryError.status``): a damaged version 409, a full
disk 507, and so on; a name that names nothing the 404 page, with the reason. A database that does
not answer (restarting, say) is a 503. A page's form with more files or fields than Django takes
is a 413 naming the setting (``FormLimitsMiddleware``)."""

import logging
from urllib.parse import unquote

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.db import InterfaceError, OperationalError
from django.http import Http404, HttpResponse, JsonResponse
from django.views.defaults import page_not_found

from .errors import NotFound, RegistryError, is_disk_full

log = logging.getLogger(__name__)

DISK_FULL = ("the server's disk is full: nothing was written; try again once space is freed "
             "under MEDIA_ROOT")
DATABASE_GONE = "the database does not answer: nothing was changed; try again in a moment"

OVER_SIZE = {  # Django's limits on a request body, each said with its setting (413)
    RequestDataTooBig: lambda: (
        f"the request body is over {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes (setting "
        f"DATA_UPLOAD_MAX_MEMORY_SIZE; files sent in a form do not count): send less in one "
        f"request"),
    TooManyFieldsSent: lambda: (
        f"the request holds more than {settings.DATA_UPLOAD_MAX_NUMBER_FIELDS} fields (setting "
        f"DATA_UPLOAD_MAX_NUMBER_FIELDS)"),
    TooManyFilesSent: lambda: (
        f"the request holds more than {settings.DATA_UPLOAD_MAX_NUMBER_FILES} files (setting "
        f"DATA_UPLOAD_MAX_NUMBER_FILES)"),
}


def refusal(request, message: str, status: int) -> HttpResponse:
    """The answer to a request the registry refuses: ``{"detail": message}`` for the API (any
    path under ``/api/``), the message as plain text for pages."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": message}, status=status)
    return HttpResponse(message, status=status, content_type="text/plain; charset=utf-8")


class RequestGuardsMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if "\x00" in request.path or "\x00" in unquote(request.META.get("QUERY_STRING", "")):
            return refusal(request, "the address holds a NUL byte (%00), which no name or value "
                                    "here contains", 400)
        return self.get_response(request)

    def process_exception(self, request, exception):
        if isinstance(exception, NotFound):
            return page_not_found(request, Http404(str(exception)))
        if isinstance(exception, RegistryError):
            return refusal(request, str(exception), exception.status)
        if isinstance(exception, (OperationalError, InterfaceError)):
            return database_gone(request, exception)
        if is_disk_full(exception):
            return refusal(request, DISK_FULL, 507)
        return None


class FormLimitsMiddleware:
    """A page's form with more files or fields than Django takes (an import of 101 files, say)
    is answered 413 with the setting that bounds it, before the CSRF check reads the form (which
    would say "CSRF verification failed" instead). The API answers the same in its own handler."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.method == "POST" and not request.path.startswith("/api/"):
            try:
                request.POST  # noqa: B018 - read now, as the CSRF check would
            except (TooManyFilesSent, TooManyFieldsSent) as exc:
                return refusal(request, OVER_SIZE[type(exc)](), 413)
        return self.get_response(request)


def database_gone(request, error: Exception) -> HttpResponse:
    """503 in words: the database does not answer (restarting, say); its reason goes to the log."""
    log.warning("%s %s: the database does not answer (%s)", request.method, request.path, error)
    return refusal(request, DATABASE_GONE, 503)
