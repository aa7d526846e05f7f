"""Aliases (``production``, ``candidate``): movable pointers to versions, and every move; a ref's
version looked up in one query for the encode (``digest_row``)."""

from __future__ import annotations

import functools
import re

from django.conf import settings
from django.db import connections, models
from django.utils import timezone

from tokenizers_app.errors import Invalid

# An alias name: it starts with a letter, so it is never read as a version number (``web@3``).
# The one rule: the service checks names with it, and the pages' URLs match refs with it.
ALIAS_PATTERN = r"[a-z][a-z0-9_-]{0,49}"


def version_number(ref: str) -> int | None:
    """What a ref after the ``@`` names: a version number, or an alias (``None``):
    ``version_number("3") -> 3``, ``version_number("production") -> None``; a ref that is
    neither (``"²"``, ``"Prod"``) raises ``Invalid`` saying so."""
    if ref.isascii() and ref.isdigit():  # "²".isdigit() is true, and int("²") fails
        return int(ref)
    if re.fullmatch(ALIAS_PATTERN, ref):
        return None
    raise Invalid(f"{ref!r} is not a version number or an alias: write a number (1, 2, ...) or "
                  f"an alias (lowercase letters, digits, '_' or '-', starting with a letter)")



def digest_row(db: str, name: str, ref: str, ready: str) -> tuple[int, str] | None:
    """``(pk, digest)`` of the version that ``name@ref`` names (an alias, or the number of a
    version whose status is ``ready``), in one query of SQL written once per process (the ORM's
    building of it cost more than running it: bench/HISTORY.md), or None:
    ``digest_row("default", "web-en", "production", "ready") -> (12, "9f2c...")``."""
    number = version_number(ref)
    by, params = ("alias", [name, ref]) if number is None else ("number", [name, number, ready])
    with connections[db].cursor() as cursor:
        cursor.execute(lookup_sql(by), params)
        return cursor.fetchone()


@functools.cache
def lookup_sql(by: str) -> str:
    """``digest_row``'s query by ``"alias"`` or by ``"number"``, on the models' tables. One row
    at most: tokenizer names are unique, and a tokenizer's aliases and numbers."""
    versions, tokenizers = (Alias._meta.get_field(field).related_model._meta.db_table
                            for field in ("version", "tokenizer"))
    found = (f"SELECT v.id, v.digest FROM {versions} v "
             f"JOIN {tokenizers} t ON t.id = v.tokenizer_id ")
    if by == "alias":
        return (found + f"JOIN {Alias._meta.db_table} a ON a.version_id = v.id "
                        f"WHERE t.name = %s AND a.name = %s")
    return found + "WHERE t.name = %s AND v.number = %s AND v.status = %s"


class Alias(models.Model):
    """A movable pointer (``production``, ``candidate``) to one version of a tokenizer."""

    tokenizer = models.ForeignKey("Tokenizer", on_delete=models.CASCADE, related_name="aliases")
    name = models.CharField(max_length=50)
    version = models.ForeignKey("TokenizerVersion", on_delete=models.PROTECT, related_name="aliases")
    moved_at = models.DateTimeField(default=timezone.now)
    moved_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                 on_delete=models.SET_NULL, related_name="+")
    gate_tolerance = models.FloatField(
        null=True, blank=True, help_text="a gate (set by staff): a move must keep every id "
        "(identical or extends), every golden, and no headline metric worse than the current "
        "target's by more than this share (0.01: 1%); null: no gate")

    class Meta:
        verbose_name_plural = "aliases"
        ordering = ["tokenizer__name", "name"]
        constraints = [models.UniqueConstraint(fields=["tokenizer", "name"],
                                               name="alias_unique_name")]

    def __str__(self) -> str:
        return f"{self.tokenizer.name}@{self.name}"


class AliasMove(models.Model):
    """One move of an alias: from which version (none when created) to which, by whom, when."""

    alias = models.ForeignKey(Alias, on_delete=models.CASCADE, related_name="moves")
    from_version = models.ForeignKey("TokenizerVersion", null=True, blank=True,
                                     on_delete=models.PROTECT, related_name="+")
    to_version = models.ForeignKey("TokenizerVersion", on_delete=models.PROTECT, related_name="+")
    moved_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                 on_delete=models.SET_NULL, related_name="+")
    moved_at = models.DateTimeField(default=timezone.now)
    gate_checks = models.JSONField(default=list, blank=True, help_text=(
        "the gate's checks at this move: [{name, passed, detail}] (empty: no gate)"))
    forced_reason = models.TextField(blank=True, help_text="why staff forced a refused move")

    class Meta:
        ordering = ["-moved_at", "-id"]

    def __str__(self) -> str:
        """``prose-bpe@production: 1 → 2`` (``new → 1`` when the move created the alias)."""
        start = self.from_version.number if self.from_version_id else "new"
        return f"{self.alias}: {start} → {self.to_version.number}"


class GoldenEncoding(models.Model):
    """A text pinned on a tokenizer with the ids a chosen version gives it: a version that gives
    other ids does not keep this golden (an alias gate refuses a move to it)."""

    tokenizer = models.ForeignKey("Tokenizer", on_delete=models.CASCADE, related_name="goldens")
    text = models.TextField()
    ids = models.JSONField(help_text="the ids that pinned_from gives the text (encode_ordinary)")
    pinned_from = models.ForeignKey("TokenizerVersion", on_delete=models.PROTECT,
                                    related_name="+")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["tokenizer__name", "id"]

    def __str__(self) -> str:
        return f"{self.tokenizer.name}: {self.text[:40]!r}"
