"""Requests refused before any view runs: a NUL byte in the address (no name in the registry
holds one, and Postgres cannot even compare text that does) is a 400 with the reason. And a
damaged version met by any page (its rows no longer give its digest) is a 409 saying so, and a
full disk a 507, a database that does not answer (restarting, say) a 503, in words."""

import logging
from urllib.parse import unquote

from django.db import InterfaceError, OperationalError
from django.http import HttpResponse, HttpResponseBadRequest, JsonResponse

from .bpe.atomic_files import is_disk_full
from .models import DamagedVersion

log = logging.getLogger(__name__)


class RequestGuardsMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if "\x00" in request.path or "\x00" in unquote(request.META.get("QUERY_STRING", "")):
            message = "the address holds a NUL byte (%00), which no name or value here contains"
            if request.path.startswith("/api/"):
                return JsonResponse({"detail": message}, status=400)
            return HttpResponseBadRequest(message, content_type="text/plain; charset=utf-8")
        return self.get_response(request)

    def process_exception(self, request, exception):
        if isinstance(exception, DamagedVersion):
            return HttpResponse(str(exception), status=409,
                                content_type="text/plain; charset=utf-8")
        if isinstance(exception, (OperationalError, InterfaceError)):
            return database_gone(request, exception)
        if is_disk_full(exception):
            return HttpResponse("the server's disk is full: nothing was written; try again once "
                                "space is freed", status=507,
                                content_type="text/plain; charset=utf-8")
        return None


def database_gone(request, error: Exception):
    """503 in words: the database does not answer (restarting, say); its reason goes to the log."""
    log.warning("%s %s: the database does not answer (%s)", request.method, request.path, error)
    message = "the database does not answer: nothing was changed; try again in a moment"
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": message}, status=503)
    return HttpResponse(message, status=503, content_type="text/plain; charset=utf-8")
