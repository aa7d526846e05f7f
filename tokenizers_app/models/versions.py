"""Tokenizers and their immutable, numbered versions; a version's merge table and vocabulary as
rows; aliases (``production``, ``candidate``) and their recorded moves.

A version's merge table and vocabulary are rows (``MergeRule``, ``VocabEntry``), so they can be
browsed, searched and diffed in SQL. They are written once, in the transaction that creates the
version (COPY on Postgres), and read back in rank order by ``TokenizerVersion.load_tokenizer``.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from tokenizers_app.engines.registry import DEFAULT_KIND, TokenizerKind, kind_choices, kind_named
from tokenizers_app.errors import Conflict, Invalid, NotFound

from .aliases import digest_row, version_number
from .contents import VocabEntry
from .engine_versions import EngineContents
from .runs import TrainingRun
from .version_contents import VersionContents


class TokenizerQuerySet(models.QuerySet):
    def with_latest(self):
        """Each tokenizer with ``ready_versions`` (a count) and ``latest`` (the number of its
        latest ready version, ``VersionQuerySet.latest_first``, or None)."""
        ready = models.Q(versions__status=TokenizerVersion.Status.READY)
        latest = TokenizerVersion.objects.filter(tokenizer=models.OuterRef("pk")).latest_first()
        return self.annotate(ready_versions=models.Count("versions", filter=ready),
                             latest=models.Subquery(latest.values("number")[:1]))


class Tokenizer(models.Model):
    """A name (``web-en-32k``) with numbered, immutable versions. Its ``owner`` (the user who
    created it; staff may change it in the admin) and staff may add versions to it; a tokenizer
    without an owner is staff-only (``services.permissions``)."""

    name = models.CharField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                              on_delete=models.SET_NULL, related_name="+",
                              help_text="adds versions, with staff; none: staff only")
    created_at = models.DateTimeField(default=timezone.now)

    objects = TokenizerQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class VersionQuerySet(models.QuerySet):
    def ready(self):
        return self.filter(status=TokenizerVersion.Status.READY)

    def searched(self, query: str):
        """The ready versions a search box's ``NAME@REF`` finds, latest first: ``web@`` every
        version of the tokenizers whose name holds ``web``, ``web@3`` their version 3,
        ``web@prod`` those an alias starting with ``prod`` points at. Without an ``@``: none
        (the tokenizers found list theirs)."""
        name, at, ref = query.partition("@")
        if not at:
            return self.none()
        found = self.ready().filter(tokenizer__name__icontains=name.strip())
        ref = ref.strip()
        if ref.isascii() and ref.isdigit():
            found = found.filter(number=int(ref))
        elif ref:
            found = found.filter(aliases__name__startswith=ref.lower())
        return found.select_related("tokenizer").order_by("tokenizer__name", "-number").distinct()

    def latest_first(self):
        """The ready versions, the latest (highest number) first: what a tokenizer's bare name
        means (``resolve("web-en")``), and its ``latest`` in ``with_latest``."""
        return self.ready().order_by("-number")

    def resolve(self, ref: str) -> TokenizerVersion:
        """``resolve("web-en@3")``, ``resolve("web-en@production")``; ``resolve("web-en")`` is the
        latest ready version. A ref that names nothing raises ``NotFound`` (``Invalid`` when it is
        not a ref at all)."""
        name, at, version_ref = str(ref).partition("@")
        if at and not version_ref:
            raise Invalid(f"{ref!r} names no version: write a number or an alias after the "
                             f"@ ({name}@1, {name}@production), or the name alone for the latest")
        if not version_ref:
            found = self.filter(tokenizer__name=name).latest_first().first()
        else:  # one row at most (unique together): no ORDER BY to build
            number = version_number(version_ref)
            query = self.filter(tokenizer__name=name).filter(
                **{"number": number} if number is not None else {"aliases__name": version_ref})
            if number is not None:
                query = query.ready()
            found = next(iter(query.order_by()[:1]), None)
        return found or self._not_found(name, version_ref)

    def digest_only(self, name: str, ref: str) -> TokenizerVersion:
        """``only("pk", "digest").resolve(f"{name}@{ref}")`` for the encode, in one query of SQL
        (``aliases.digest_row``): the version ``web-en@production`` names now, its other columns
        read on first use. A ref that names nothing goes through ``resolve`` for its error."""
        row = digest_row(self.db, name, ref, TokenizerVersion.Status.READY) if ref else None
        if row is None:
            return self.only("pk", "digest").resolve(f"{name}@{ref}")
        return self.model.from_db(self.db, ["id", "digest"], row)

    def _not_found(self, name: str, version_ref: str):
        """Raise ``NotFound`` saying why ``name@version_ref`` names no version."""
        tokenizer = Tokenizer.objects.filter(name=name).first()
        if tokenizer is None:
            raise NotFound(f"no tokenizer named {name!r}")
        versions = self.filter(tokenizer=tokenizer).ready()
        if not version_ref:
            raise NotFound(f"tokenizer {name!r} has no ready version yet")
        if version_number(version_ref) is not None:
            return self._by_number(versions, name, version_number(version_ref))
        known = ", ".join(tokenizer.aliases.values_list("name", flat=True)) or "none"
        raise NotFound(f"tokenizer {name!r} has no alias {version_ref!r} (aliases: {known})")

    def resolve_many(self, refs, most: int = 8) -> list[TokenizerVersion]:
        """``resolve_many("web@1,web@production")``: the versions of a comma-separated list (or a
        list) of refs, in order; an empty list, a repeat or more than ``most`` raise ``Invalid``,
        and refs that name nothing raise the first one's error naming each of them."""
        refs = [r.strip() for r in (refs.split(",") if isinstance(refs, str) else refs)]
        refs = [r for r in refs if r]
        if not refs:
            raise Invalid("name at least one version, as NAME@NUMBER or NAME@ALIAS",
                          field="versions")
        if len(refs) > most:
            raise Invalid(f"compare at most {most} versions at once, not {len(refs)}",
                          field="versions")
        versions, refused = [], []
        for ref in refs:  # every ref that names nothing is named, not the first alone
            try:
                versions.append(self.resolve(ref))
            except (NotFound, Invalid) as exc:
                refused.append(exc)
        if refused:
            raise type(refused[0])("; ".join(map(str, refused)), field="versions")
        if len({v.pk for v in versions}) < len(versions):
            raise Invalid(f"{', '.join(refs)} name the same version twice", field="versions")
        return versions

    def _by_number(self, versions, name: str, number: int) -> TokenizerVersion:
        found = versions.filter(number=number).first()
        if found is None:
            numbers = list(versions.order_by("number").values_list("number", flat=True))
            raise NotFound(f"tokenizer {name!r} has no version {number} (versions: "
                             f"{', '.join(map(str, numbers)) or 'none'})")
        return found


class TokenizerVersion(EngineContents, VersionContents, models.Model):
    """An immutable tokenizer: pattern, special tokens, merge rows and vocab rows, and a digest.

    Only ``lifecycle`` and ``notes`` change after the version is ready.
    """

    class Status(models.TextChoices):
        BUILDING = "building"
        READY = "ready"

    class Lifecycle(models.TextChoices):
        DRAFT = "draft"
        PUBLISHED = "published"
        DEPRECATED = "deprecated"

    class Source(models.TextChoices):
        TRAINING = "training"
        IMPORT = "import"

    IMMUTABLE_FIELDS = ("tokenizer_id", "number", "status", "algorithm", "pattern", "split",
                        "engine_description", "options", "special_tokens", "vocab_size",
                        "merge_count", "digest", "source",
                        "source_detail")  # a ready version stays ready

    tokenizer = models.ForeignKey(Tokenizer, on_delete=models.PROTECT, related_name="versions")
    number = models.PositiveIntegerField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.BUILDING)
    algorithm = models.CharField(max_length=20, choices=kind_choices, default=DEFAULT_KIND,
                                 help_text="the kind of tokenizer")
    pattern = models.TextField(blank=True, help_text="byte-level BPE's pre-tokenizing regex (a "
                                                     "short name or the regex); \"\" for the "
                                                     "other kinds")
    split = models.CharField(max_length=20, blank=True, help_text=(
        "character-level BPE's word split (whitespace or word_punct); \"\" for the other kinds"))
    engine_description = models.TextField(blank=True, help_text=(
        "a library's tokenizer (hf, sentencepiece): its model and normalizer, as the engine "
        "describes them (engines.hf.describe, engines.spm); \"\" for the core's kinds"))
    options = models.JSONField(default=dict, blank=True, help_text=(
        'character-level BPE: {"lowercase", "unk_token", "end_of_word_suffix"}'))
    special_tokens = models.JSONField(default=list, blank=True)
    vocab_size = models.PositiveIntegerField()
    merge_count = models.PositiveIntegerField()
    digest = models.CharField(max_length=64, help_text="sha256 of the canonical content")
    source = models.CharField(max_length=10, choices=Source.choices)
    source_detail = models.CharField(max_length=255, blank=True)
    standard_layout = models.BooleanField(
        default=False, help_text="ids are special tokens, then the 256 bytes, then one per merge "
                                 "(as every trained version): loading derives the vocab")
    training_run = models.ForeignKey(TrainingRun, null=True, blank=True,
                                     on_delete=models.SET_NULL, related_name="built_versions")
    lifecycle = models.CharField(max_length=10, choices=Lifecycle.choices,
                                 default=Lifecycle.DRAFT)
    notes = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    objects = VersionQuerySet.as_manager()

    class Meta:
        ordering = ["tokenizer__name", "number"]
        constraints = [
            models.UniqueConstraint(fields=["tokenizer", "number"], name="version_unique_number"),
            models.UniqueConstraint(fields=["tokenizer", "digest"], name="version_unique_digest"),
        ]

    def __str__(self) -> str:
        return self.label

    @property
    def kind(self) -> TokenizerKind:
        """This version's kind (``engines.registry``): what it is, how it is kept and shown."""
        return kind_named(self.algorithm)

    @property
    def shown_pattern(self) -> str:
        """How the version cuts text, in one line: the regex, the word split or the engine's
        description, whichever its kind has. The API's and the pages' "pattern" shows this, as
        it always has."""
        return self.pattern or self.split or self.engine_description

    @property
    def word_end(self) -> str:
        """A character-level version's end-of-word suffix (``</w>``), "" for byte-level."""
        return self.options.get("end_of_word_suffix", "") if self.options else ""

    @property
    def alphabet_size(self) -> int:
        """The base symbols: 256 bytes, or a character-level version's alphabet (what is
        neither special nor made by a merge)."""
        if not self.kind.has_alphabet:
            return 256
        return self.vocab_entries.filter(kind=VocabEntry.Kind.SYMBOL).count()

    @property
    def first_merge_id(self) -> int | None:
        """The id of merge 0's token when the ids are special tokens, base symbols (bytes or
        an alphabet), then one per merge, as in every trained version; else None."""
        if self.standard_layout or (self.kind.has_alphabet
                                    and self.source == self.Source.TRAINING):
            return self.vocab_size - self.merge_count
        return None

    @property
    def label(self) -> str:
        return f"{self.tokenizer.name}@{self.number}"

    def save(self, *args, **kwargs):
        self._refuse_content_change()
        super().save(*args, **kwargs)

    def _refuse_content_change(self) -> None:
        if self.pk is None:
            return
        stored = TokenizerVersion.objects.filter(pk=self.pk, status=self.Status.READY)
        stored = stored.values(*self.IMMUTABLE_FIELDS).first()
        changed = [f for f in self.IMMUTABLE_FIELDS if stored and stored[f] != getattr(self, f)]
        if changed:
            raise Conflict(f"version {self.pk} is ready and immutable; cannot change "
                             f"{', '.join(changed)}")

    def lineage(self) -> dict:
        """Where this version comes from, as plain JSON: its source, digest, who and when, and
        for a trained version its run's corpora (name and sha256), parameters and timings."""
        run = self.training_run
        found = {"source": self.source, "source_detail": self.source_detail,
                 "digest": self.digest, "created_at": self.created_at.isoformat(),
                 "created_by": self.created_by.get_username() if self.created_by else None,
                 "training_run": None, "extends": None}
        if run is not None:
            found["extends"] = run.extends.label if run.extends_id else None
            found["training_run"] = {
                "id": run.pk, **run.params.public(), "stage_seconds": run.stage_seconds,
                "extends": run.extends.label if run.extends_id else None,
                "merges_per_second": run.merges_per_second,
                "corpora": [{"name": c.name, "sha256": c.sha256, "size_bytes": c.size_bytes,
                             "weight": run.weight_of(c)}
                            for c in run.corpora.order_by("name")]}
        return found

    def mark_ready(self) -> None:
        """The version's rows are written: from now on it is immutable."""
        TokenizerVersion.objects.filter(pk=self.pk).update(status=self.Status.READY)
        self.status = self.Status.READY
