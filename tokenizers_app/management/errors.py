"""The commands' one mapping of errors: what a workflow refuses (a ``RegistryError``, or the
core's ``ValueError`` naming the bad value) ends the command with ``CommandError`` and its
message, one line and no traceback; its class is not read for words."""

from contextlib import contextmanager

from django.core.management.base import CommandError

from tokenizers_app.errors import REFUSALS


@contextmanager
def refusals_as_command_errors():
    """``with refusals_as_command_errors(): move_alias(...)``: a refusal -> ``CommandError``."""
    try:
        yield
    except REFUSALS as error:
        raise CommandError(str(error)) from None
