"""The API's one mapping from errors to answers: ``{"detail": message}`` with the status of the
error's class (``errors.RegistryError.status``: 400, 403, 404, 409, 413, 429, 503, 507). A plain
``ValueError`` (the core's, naming the bad value) is 400; Django's own ``Http404`` and
``PermissionDenied`` 404 and 403; a database that does not answer 503; a full disk 507; a
body over Django's own limits (``DATA_UPLOAD_MAX_MEMORY_SIZE`` and the field and file counts) 413.
An address under ``/api/`` that names no operation is a 404 in JSON too (``unknown_address``,
and ``not_found`` for a 404 raised outside the API's handlers).
The message is never read to choose the status."""

from django.core.exceptions import PermissionDenied
from django.db import DataError, InterfaceError, OperationalError
from django.http import Http404
from django.views.decorators.csrf import csrf_exempt
from django.views.defaults import page_not_found
from ninja import Schema

from ..errors import RegistryError, is_disk_full
from ..guards import DISK_FULL, OVER_SIZE, database_gone, refusal

DJANGO_STATUS = {Http404: 404, PermissionDenied: 403}


class Error(Schema):
    detail: str


class Invalid(Schema):
    """A request that does not fit the schema (422): what is wrong, where; or, in words, a text
    this version's pattern takes too long to split (``PatternTooSlow``)."""

    detail: list[dict] | str


def status_of(error: Exception) -> int:
    """The status of an error, from its class alone."""
    if isinstance(error, RegistryError):
        return error.status
    return next((status for kind, status in DJANGO_STATUS.items() if isinstance(error, kind)),
                400)


def install(api) -> None:
    def refused(request, error: Exception):
        return api.create_response(request, {"detail": str(error) or "not found"},
                                   status=status_of(error))

    for kind in (RegistryError, ValueError, *DJANGO_STATUS):
        api.add_exception_handler(kind, refused)

    def disk_full(request, error: OSError):
        if not is_disk_full(error):
            raise error
        return api.create_response(request, {"detail": DISK_FULL}, status=507)

    api.add_exception_handler(OSError, disk_full)
    for kind, words in OVER_SIZE.items():
        api.add_exception_handler(kind, lambda request, error, words=words: api.create_response(
            request, {"detail": words()}, status=413))
    for kind in (OperationalError, InterfaceError):  # answered as the pages' guard answers it
        api.add_exception_handler(kind, database_gone)
    api.add_exception_handler(DataError, lambda request, error: api.create_response(
        request, {"detail": "the request holds a value the database cannot store or compare "
                            "(text with a NUL byte, or a number out of range): no name or "
                            "value here holds one"}, status=400))


@csrf_exempt
def unknown_address(request, *args, **kwargs):
    """Any address under ``/api/`` that names no operation: 404 in JSON, as the API answers."""
    return refusal(request, f"no operation of the API is at {request.path}: the operations "
                            f"are listed at /api/docs", 404)


def not_found(request, exception):
    """Django's 404 answer (``handler404``, DEBUG off): JSON under ``/api/`` (ninja's own root,
    ``/api/``, raises ``Http404`` outside the API's handlers), the page elsewhere."""
    if request.path.startswith("/api/"):
        return unknown_address(request)
    return page_not_found(request, exception)


# every refusal an operation may answer (a busy database or task queue is 503 on any of them)
ERRORS = {400: Error, 401: Error, 403: Error, 404: Error, 409: Error, 413: Error, 422: Invalid,
          429: Error, 503: Error, 507: Error}
