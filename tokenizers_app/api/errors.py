"""One place that turns the workflows' errors into HTTP answers a person can act on:
``{"detail": "..."}`` with 400, 403, 404, 409, 413, 503 when the database does not answer, or
507 when the server's disk is full."""

from django.core.exceptions import PermissionDenied
from django.db import DataError, InterfaceError, OperationalError
from django.http import Http404
from ninja import Schema

from ..bpe.atomic_files import is_disk_full
from ..bpe.match_budget import PatternTooSlow
from ..guards import database_gone
from ..services.corpora import NoRoom

NOT_FOUND = ("no tokenizer named", "no corpus named", "no training run")
NOT_FOUND_INSIDE = (" has no version ", " has no alias ", " has no ready version")
CONFLICT = ("a corpus named", "damaged version")


class Error(Schema):
    detail: str


class Invalid(Schema):
    """A request that does not fit the schema (422): what is wrong, where; or, in words, a text
    this version's pattern takes too long to split (``PatternTooSlow``)."""

    detail: list[dict] | str


class TooLarge(Exception):
    """A request larger than the API takes (413)."""


def status_of(error: Exception) -> int:
    message = str(error)
    if isinstance(error, PatternTooSlow):  # the request's budget for splitting text ran out
        return PatternTooSlow.status
    if isinstance(error, PermissionDenied):
        return 403
    if isinstance(error, (Http404,)) or message.startswith(NOT_FOUND) or any(
            part in message for part in NOT_FOUND_INSIDE):
        return 404
    if isinstance(error, TooLarge):
        return 413
    if isinstance(error, NoRoom):
        return 507
    if message.startswith(CONFLICT):
        return 409
    return 400


def install(api) -> None:
    for kind in (ValueError, PermissionDenied, Http404, TooLarge):
        api.add_exception_handler(kind, lambda request, error: api.create_response(
            request, {"detail": str(error) or "not found"}, status=status_of(error)))

    def disk_full(request, error: OSError):
        if not is_disk_full(error):
            raise error
        return api.create_response(request, {"detail": DISK_FULL}, status=507)

    api.add_exception_handler(OSError, disk_full)
    for kind in (OperationalError, InterfaceError):  # answered as the pages' guard answers it
        api.add_exception_handler(kind, database_gone)
    api.add_exception_handler(DataError, lambda request, error: api.create_response(
        request, {"detail": "the request holds text the database cannot store or compare "
                            "(a NUL byte, say): no name or value here contains it"}, status=400))


DISK_FULL = ("the server's disk is full: nothing was written; try again once space is freed "
             "under MEDIA_ROOT")
ERRORS = {400: Error, 401: Error, 403: Error, 404: Error, 409: Error, 413: Error, 422: Invalid,
          507: Error}
