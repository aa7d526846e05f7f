"""Parallel sets: evaluation corpora with the same content, one per language, aligned line by
line, with one pivot language against which every other language's tokens are counted."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from tokenizers_app.errors import NotFound

from .corpora import Corpus


class ParallelSetQuerySet(models.QuerySet):
    def named(self, name: str) -> ParallelSet:
        """The set called ``name``; an unknown name raises ``NotFound`` listing some known."""
        found = self.filter(name=name).first()
        if found is None:
            known = ", ".join(self.order_by("name").values_list("name", flat=True)[:20])
            raise NotFound(f"no parallel set named {name!r} (known sets: {known or 'none'}); "
                           f"import one with `manage.py import_parallel FILE --name NAME`",
                           field="set")
        return found


class ParallelSet(models.Model):
    """One content in several languages: each language's lines are one corpus (a member)."""

    class Format(models.TextChoices):
        TSV = "tsv", "TSV"
        JSONL = "jsonl", "JSON Lines"
        PO = "po", "gettext .po files"
        CORPORA = "corpora", "existing corpora"

    name = models.CharField(max_length=100, unique=True)
    pivot = models.CharField(max_length=35, help_text="BCP 47 tag of the language every "
                                                      "premium is counted against")
    source_format = models.CharField(max_length=10, choices=Format.choices)
    original_filename = models.CharField(max_length=255, blank=True)
    line_count = models.BigIntegerField(help_text="aligned lines, the same in every language")
    dropped_lines = models.BigIntegerField(default=0, help_text="lines missing in at least one "
                                                                "language, dropped from all")
    skipped = models.JSONField(default=dict, blank=True,
                               help_text="messages skipped while reading, by reason")
    uploaded_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                    on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    objects = ParallelSetQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def languages(self) -> list[str]:
        """The pivot first, then the other languages in alphabetical order."""
        others = sorted(m.language for m in self.members.all() if m.language != self.pivot)
        return [self.pivot, *others]

    def corpora(self) -> dict[str, Corpus]:
        """Each language's corpus, by language."""
        return {m.language: m.corpus for m in self.members.select_related("corpus")}


class ParallelMember(models.Model):
    """One language of a parallel set: its corpus (an evaluation corpus)."""

    parallel_set = models.ForeignKey(ParallelSet, on_delete=models.CASCADE,
                                     related_name="members")
    language = models.CharField(max_length=35)
    corpus = models.ForeignKey(Corpus, on_delete=models.PROTECT,
                               related_name="parallel_members")

    class Meta:
        ordering = ["language"]
        constraints = [models.UniqueConstraint(fields=["parallel_set", "language"],
                                               name="parallel_member_unique_language")]

    def __str__(self) -> str:
        return f"{self.parallel_set.name}: {self.language}"
