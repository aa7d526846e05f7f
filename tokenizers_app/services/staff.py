"""Staff actions on versions: publish, deprecate and annotate them, and move aliases (each
move recorded). Anyone else gets ``PermissionDenied``."""

from __future__ import annotations

import regex
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

from ..models import ALIAS_PATTERN, Alias, AliasMove, TokenizerVersion


def _require_staff(user, action: str) -> None:
    if user is None or not user.is_active or not user.is_staff:
        raise PermissionDenied(f"only staff can {action}")


def set_version_lifecycle(*, version: TokenizerVersion, lifecycle: str, user
                          ) -> TokenizerVersion:
    """Publish or deprecate a version (or return it to draft): staff only."""
    _require_staff(user, f"mark versions {lifecycle}")
    if lifecycle not in TokenizerVersion.Lifecycle.values:
        raise ValueError(f"lifecycle must be one of {', '.join(TokenizerVersion.Lifecycle.values)}"
                         f", got {lifecycle!r}")
    version.lifecycle = lifecycle
    version.save(update_fields=["lifecycle"])
    return version


def publish_version(*, version: TokenizerVersion, user) -> TokenizerVersion:
    return set_version_lifecycle(version=version, lifecycle=TokenizerVersion.Lifecycle.PUBLISHED,
                                 user=user)


def deprecate_version(*, version: TokenizerVersion, user) -> TokenizerVersion:
    return set_version_lifecycle(version=version, lifecycle=TokenizerVersion.Lifecycle.DEPRECATED,
                                 user=user)


def annotate_version(*, version: TokenizerVersion, notes: str, user) -> TokenizerVersion:
    _require_staff(user, "annotate versions")
    version.notes = notes
    version.save(update_fields=["notes"])
    return version


_ALIAS = regex.compile(ALIAS_PATTERN)


def check_alias_name(name) -> str:
    """``check_alias_name("production") -> "production"``; names that could be read as a version
    number, or hold other characters, raise ValueError."""
    if not isinstance(name, str) or not _ALIAS.fullmatch(name):
        raise ValueError(f"alias {name!r} is not valid: use 1-50 lowercase letters, digits, '_' or "
                         f"'-', starting with a letter")
    return name


def move_alias(*, version: TokenizerVersion, name: str, user) -> Alias:
    """Point the alias ``name`` of the version's tokenizer at ``version`` (creating it), and
    record the move: staff only."""
    _require_staff(user, "move aliases")
    check_alias_name(name)
    if version.status != TokenizerVersion.Status.READY:
        raise ValueError(f"version {version.label} is not ready")
    with transaction.atomic():
        alias = Alias.objects.select_for_update().filter(tokenizer=version.tokenizer_id,
                                                         name=name).first()
        previous = alias.version if alias else None
        if previous == version:
            return alias
        if alias is None:
            alias = Alias(tokenizer=version.tokenizer, name=name)
        alias.version, alias.moved_by, alias.moved_at = version, user, timezone.now()
        alias.save()
        AliasMove.objects.create(alias=alias, from_version=previous, to_version=version,
                                 moved_by=user, moved_at=alias.moved_at)
    return alias
