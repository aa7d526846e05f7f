"""Requests refused before any view runs, and errors no view answered, in words: ``refusal`` is
the one answer for both (JSON ``{"detail": ...}`` under ``/api/``, plain text for pages). A
registry error a page action met is the site's own page (``refused_page``) with a way back.

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
from django.shortcuts import render
from django.utils.http import url_has_allowed_host_and_scheme
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


def refused_page(request, message: str, status: int) -> HttpResponse:
    """A page action the registry refused (a member posting "publish", say), as a page of the
    site: its header, the reason, and a way back (``way_back``)."""
    back, back_label = way_back(request)
    try:  # the page reads the session (its header names the user): the database must answer
        return render(request, "refused.html", {"reason": message, "status": status,
                                                "back": back, "back_label": back_label},
                      status=status)
    except (OperationalError, InterfaceError):
        return refusal(request, message, status)


def way_back(request) -> tuple[str, str]:
    """Where a refused page sends its reader back: the page they came from (``Referer``, when
    it is this site's), else the page of the object the action was on (the address without its
    last part: ``/runs/3/cancel`` -> ``/runs/3/``)."""
    came_from = request.headers.get("Referer", "")
    if came_from and url_has_allowed_host_and_scheme(came_from, {request.get_host()},
                                                     request.is_secure()):
        return came_from, "Back to the previous page"
    parent = request.path.rstrip("/").rsplit("/", 1)[0] + "/"
    return parent, f"Back to {parent}"


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
            if request.path.startswith("/api/"):
                return refusal(request, str(exception), exception.status)
            return refused_page(request, str(exception), exception.status)
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
