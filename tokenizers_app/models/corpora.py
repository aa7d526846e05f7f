"""Corpora: text files stored by content, with what was learned while storing them."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.db import models
from django.utils import timezone

from tokenizers_app.errors import NotFound
from tokenizers_app.storage import get_store


class CorpusQuerySet(models.QuerySet):
    def by_names(self, names) -> list[Corpus]:
        """The corpora with these names, in order; an unknown name raises ``NotFound``."""
        names = list(names)
        found = {c.name: c for c in self.filter(name__in=names)}
        for name in names:
            if name not in found:
                known = ", ".join(self.order_by("name").values_list("name", flat=True)[:20])
                raise NotFound(f"no corpus named {name!r} (known corpora: {known or 'none'}); "
                               f"import it first with `manage.py import_corpus PATH --name NAME`",
                               field="corpus")
        return [found[name] for name in names]

    def for_evaluation(self):
        return self.filter(is_evaluation=True)


class Corpus(models.Model):
    """A text file, content-addressed: the same bytes imported twice are one corpus."""

    name = models.CharField(max_length=100, unique=True)
    original_filename = models.CharField(max_length=255, blank=True)
    # its object in the store (``corpora/<sha256>.txt``, server-generated), read and written
    # through ``tokenizers_app.storage`` only, whichever store it is
    object_name = models.CharField(max_length=255)
    size_bytes = models.BigIntegerField()
    sha256 = models.CharField(max_length=64, unique=True)
    line_count = models.BigIntegerField()
    char_count = models.BigIntegerField()
    scripts = models.JSONField(default=dict, blank=True,
                               help_text="share of letters per Unicode script")
    language = models.CharField(max_length=35, blank=True, db_index=True,
                                help_text="BCP 47 tag of the corpus's language (en, pt-BR); "
                                          "blank when unknown or mixed")
    is_evaluation = models.BooleanField(
        default=False, help_text="every new ready version is evaluated on this corpus")
    uploaded_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                    on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    objects = CorpusQuerySet.as_manager()

    class Meta:
        verbose_name_plural = "corpora"
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def path(self) -> Path | None:
        """The file on this machine's disk when the store is ``MEDIA_ROOT``; None with a bucket
        as the store. Code reads the corpus through the store by ``object_name``."""
        return get_store().local_path(self.object_name)

    def name_not_used(self, asked_name: str) -> str | None:
        """What to tell someone who stored these bytes under ``asked_name``: nothing when the
        corpus is called that; else that the bytes are this corpus and the name was not used.
        ``web.name_not_used("web-2")`` -> "these bytes are already corpus web; the name web-2
        was not used"."""
        if asked_name == self.name:
            return None
        return f"these bytes are already corpus {self.name}; the name {asked_name} was not used"

    def set_language(self, language: str) -> None:
        """Record the corpus's language (a checked BCP 47 tag, or "" for none)."""
        Corpus.objects.filter(pk=self.pk).update(language=language)
        self.language = language

    def mark_evaluation(self, is_evaluation: bool = True) -> None:
        """Make this an evaluation corpus (every new ready version is evaluated on it), or not."""
        Corpus.objects.filter(pk=self.pk).update(is_evaluation=is_evaluation)
        self.is_evaluation = is_evaluation


