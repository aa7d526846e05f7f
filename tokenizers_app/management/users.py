"""The user a command acts for. Commands that act for a user take ``--user NAME`` and are held
to that user's rights (``services.permissions``: owners and staff); run without it, a command
acts as the operator, with full rights, and records no user."""

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError

from tokenizers_app.services.permissions import OPERATOR

USER_HELP = ("act as this user, with its rights (the owner of what it changes, or staff); "
             "without --user the command acts as the operator, with full rights")


def add_user_argument(parser) -> None:
    """``--user NAME``, optional: without it, the operator."""
    parser.add_argument("--user", help=USER_HELP)


def user_named(name: str):
    """The user called ``name``, or ``CommandError``."""
    found = get_user_model().objects.filter(username=name).first()
    if found is None:
        raise CommandError(f"no user named {name!r}")
    return found


def acting_user(name: str | None):
    """``--user NAME``'s user, or ``OPERATOR`` when no name is given."""
    return OPERATOR if name is None else user_named(name)
