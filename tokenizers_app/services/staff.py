"""Staff actions on versions: publish, deprecate and annotate them, and move aliases (each
move recorded): staff only (``permissions.check_staff``); anyone else gets ``Forbidden``."""

from __future__ import annotations

import regex
from django.db import transaction
from django.utils import timezone

from ..errors import Conflict, Invalid
from ..models import ALIAS_PATTERN, Alias, AliasMove, TokenizerVersion
from .gates import checked_move
from .permissions import check_staff, recorded


def set_version_lifecycle(*, version: TokenizerVersion, lifecycle: str, user
                          ) -> TokenizerVersion:
    """Publish or deprecate a version (or return it to draft): staff only."""
    check_staff(user, f"mark versions {lifecycle}")
    if lifecycle not in TokenizerVersion.Lifecycle.values:
        raise Invalid(f"lifecycle must be one of {', '.join(TokenizerVersion.Lifecycle.values)}"
                      f", got {lifecycle!r}", field="lifecycle")
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
    check_staff(user, "annotate versions")
    version.notes = notes
    version.save(update_fields=["notes"])
    return version


_ALIAS = regex.compile(ALIAS_PATTERN)


def check_alias_name(name) -> str:
    """``check_alias_name("production") -> "production"``; names that could be read as a version
    number, or hold other characters, raise ``Invalid``."""
    if not isinstance(name, str) or not _ALIAS.fullmatch(name):
        raise Invalid(f"alias {name!r} is not valid: use 1-50 lowercase letters, digits, '_' or "
                      f"'-', starting with a letter", field="name")
    return name


def move_alias(*, version: TokenizerVersion, name: str, user, force_reason: str = "") -> Alias:
    """Point the alias ``name`` of the version's tokenizer at ``version`` (creating it), and
    record the move: staff only. A gated alias (``services.gates``) refuses a move that fails
    its checks (``GateRefused``, 409) unless ``force_reason`` says why; the move records the
    checks and the reason."""
    check_staff(user, "move aliases")
    check_alias_name(name)
    if version.status != TokenizerVersion.Status.READY:
        raise Conflict(f"version {version.label} is not ready")
    with transaction.atomic():
        alias = Alias.objects.select_for_update().filter(tokenizer=version.tokenizer_id,
                                                         name=name).first()
        previous = alias.version if alias else None
        if previous == version:
            return alias
        checks, reason = checked_move(alias=alias, target=version, force_reason=force_reason)
        if alias is None:
            alias = Alias(tokenizer=version.tokenizer, name=name)
        alias.version, alias.moved_by, alias.moved_at = version, recorded(user), timezone.now()
        alias.save()
        AliasMove.objects.create(alias=alias, from_version=previous, to_version=version,
                                 moved_by=alias.moved_by, moved_at=alias.moved_at,
                                 gate_checks=checks, forced_reason=reason)
    return alias
