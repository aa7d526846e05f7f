"""The registry's errors, by what went wrong rather than by what the message says.

A workflow raises one of these where it finds the condition; each interface maps the class once:
the API to a status and ``{"detail": message}``, a form to the field named by ``field`` (or to the
whole form), a command to ``CommandError``. The message is for people, the class is for code:
rewording a message never changes a status or a field.

Plain Python (no Django), so the core may raise them too::

    raise Invalid("vocab size 10 is out of bounds ...", field="vocab_size")
"""

from __future__ import annotations

import errno
from contextlib import contextmanager


class RegistryError(Exception):
    """A request the registry refuses, in words. ``field``: the input it is about, if one."""

    status = 400

    def __init__(self, message: str = "", *, field: str | None = None):
        super().__init__(message)
        self.field = field


class Invalid(RegistryError, ValueError):
    """Bad input (400): a value out of bounds, a name of the wrong form, unreadable files."""


class Unencodable(RegistryError, ValueError):
    """A text this tokenizer cannot spell (422: the request is well formed): a character no
    piece holds, in a tokenizer without an unknown token (a Unigram without ``unk_id``)."""

    status = 422


class Forbidden(RegistryError):
    """The caller may not do this (403): staff only, or not the owner."""

    status = 403


class NotFound(RegistryError, LookupError):
    """No such record (404): a tokenizer, version, alias, corpus or run."""

    status = 404


class Conflict(RegistryError):
    """The request clashes with what is stored (409): a name taken, a state that forbids it."""

    status = 409


class Damaged(Conflict):
    """Stored data that no longer checks out (409): a version whose rows no longer give its
    digest (never served), a corpus whose file cannot be read."""


class TooLarge(RegistryError):
    """Larger than the registry takes (413): an upload, a text, a request body."""

    status = 413


class Unavailable(RegistryError):
    """A service the request needs does not answer (503): the task queue, the database."""

    status = 503


class StoreUnavailable(Unavailable):
    """The object store (``STORAGE_URL``) does not answer, or its bucket is missing (503):
    nothing was written; work goes on when it is back. The message names no address, bucket,
    object key or upload id (whoever sent the request reads it); ``internal`` says them all,
    for the server's log and the operator's commands (``manage.py check``)."""

    def __init__(self, message: str = "", *, field: str | None = None, internal: str = ""):
        super().__init__(message, field=field)
        self.internal = internal or message


class NoRoom(RegistryError):
    """The server's disk is full (507): nothing was written."""

    status = 507


def is_disk_full(error: BaseException) -> bool:
    """Whether an error is the disk (or the user's quota) having no room left."""
    return isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT)


@contextmanager
def room_checked(message: str):
    """``with room_checked("the corpus was not stored"): ...``: the disk having no room left
    becomes ``NoRoom`` saying so, then ``message``; any other ``OSError`` goes on as it was."""
    try:
        yield
    except OSError as error:
        if not is_disk_full(error):
            raise
        raise NoRoom(f"the server's disk is full: {message}; try again once space is freed "
                     f"under MEDIA_ROOT") from None


def is_library_panic(error: BaseException) -> bool:
    """Whether ``error`` is a native library's panic (``PanicException``, which the Rust
    bindings of Hugging Face ``tokenizers`` raise): a ``BaseException`` that is no ``Exception``,
    so ``except Exception`` lets it through, and one that does not pickle, so it cannot cross a
    process pool either. Catch it where a task records how it ended, and record it in words."""
    return not isinstance(error, Exception) and type(error).__name__ == "PanicException"


def panic_words(error: BaseException, what: str) -> str:
    """What a person reads of a library's panic during ``what`` ("this evaluation")."""
    message = str(error).strip().splitlines()[0][:300] if str(error).strip() else "no message"
    return f"the tokenizer's library failed (it panicked) during {what}: {message}"


REFUSALS = (RegistryError, ValueError)
"""What a request can be refused with: a registry error, or the core's plain ``ValueError``
naming the bad value (400, no field). ``except REFUSALS`` where an interface answers both."""
