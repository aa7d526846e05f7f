"""The API's one mapping from errors to answers: ``{"detail": message}`` with the status of the
error's class (``errors.RegistryError.status``: 400, 403, 404, 409, 413, 503, 507). A plain
``ValueError`` (the core's, naming the bad value) is 400; Django's own ``Http404`` and
``PermissionDenied`` 404 and 403; a database that does not answer 503; a full disk 507. The
message is never read to choose the status."""

from django.core.exceptions import PermissionDenied
from django.db import DataError, InterfaceError, OperationalError
from django.http import Http404
from ninja import Schema

from ..errors import RegistryError, is_disk_full
from ..guards import DISK_FULL, database_gone

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
    for kind in (OperationalError, InterfaceError):  # answered as the pages' guard answers it
        api.add_exception_handler(kind, database_gone)
    api.add_exception_handler(DataError, lambda request, error: api.create_response(
        request, {"detail": "the request holds a value the database cannot store or compare "
                            "(text with a NUL byte, or a number out of range): no name or "
                            "value here holds one"}, status=400))


ERRORS = {400: Error, 401: Error, 403: Error, 404: Error, 409: Error, 413: Error, 422: Invalid,
          507: Error}
