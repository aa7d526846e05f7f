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

from tokenizers_app.bpe import Tokenizer as CoreTokenizer
from tokenizers_app.bpe.canonical import content_digest, vocab_kinds
from tokenizers_app.bpe.inspection import token_length_histogram
from tokenizers_app.bpe.training import build_vocab, has_standard_layout
from tokenizers_app.caches import BoundedCache
from tokenizers_app.engines import ENGINE_KINDS
from tokenizers_app.errors import Conflict, Damaged, Invalid, NotFound

from .aliases import version_number
from .contents import MergeRule, VocabEntry
from .engine_versions import EngineContents
from .rows import bulk_insert, fetch_rows, q
from .runs import Kind, TrainingRun


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
        list) of refs, in order; an empty list, a repeat or more than ``most`` raise ``Invalid``.
        """
        refs = [r.strip() for r in (refs.split(",") if isinstance(refs, str) else refs)]
        refs = [r for r in refs if r]
        if not refs:
            raise Invalid("name at least one version, as NAME@NUMBER or NAME@ALIAS",
                          field="versions")
        if len(refs) > most:
            raise Invalid(f"compare at most {most} versions at once, not {len(refs)}",
                          field="versions")
        versions = [self.resolve(ref) for ref in refs]
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


# digest -> core tokenizer or engine, in this process
_LOADED: BoundedCache[CoreTokenizer] = BoundedCache(lambda: settings.LOADED_TOKENIZERS)


class TokenizerVersion(EngineContents, models.Model):
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

    IMMUTABLE_FIELDS = ("tokenizer_id", "number", "status", "algorithm", "pattern",
                        "special_tokens", "vocab_size", "merge_count", "digest", "source",
                        "source_detail")  # a ready version stays ready

    tokenizer = models.ForeignKey(Tokenizer, on_delete=models.PROTECT, related_name="versions")
    number = models.PositiveIntegerField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.BUILDING)
    algorithm = models.CharField(max_length=20, choices=Kind.choices, default=Kind.BYTE_BPE,
                                 help_text="the kind of tokenizer")
    pattern = models.TextField()
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
                 "training_run": None}
        if run is not None:
            found["training_run"] = {
                "id": run.pk, "vocab_size": run.vocab_size, "pattern": run.pattern,
                "special_tokens": run.special_tokens, "min_frequency": run.min_frequency,
                "sweep": run.sweep, "stage_seconds": run.stage_seconds,
                "merges_per_second": run.merges_per_second,
                "corpora": [{"name": c.name, "sha256": c.sha256, "size_bytes": c.size_bytes}
                            for c in run.corpora.order_by("name")]}
        return found

    def mark_ready(self) -> None:
        """The version's rows are written: from now on it is immutable."""
        TokenizerVersion.objects.filter(pk=self.pk).update(status=self.Status.READY)
        self.status = self.Status.READY

    def write_contents(self, tokenizer: CoreTokenizer) -> None:
        """Write the merge rows and vocab rows of ``tokenizer`` (call inside the transaction that
        created this version)."""
        pk = self.pk
        counts = tokenizer.merge_counts or [None] * len(tokenizer.merges)
        merge_rows = ((pk, rank, left, right, count)
                      for rank, ((left, right), count) in enumerate(zip(tokenizer.merges, counts)))
        bulk_insert(MergeRule, ["version_id", "rank", "left", "right", "count"], merge_rows)
        bulk_insert(VocabEntry, ["version_id", "token_id", "token", "kind"],
                    ((pk, i, token, kind) for i, token, kind in vocab_kinds(tokenizer)))
        self.standard_layout = has_standard_layout(tokenizer)
        TokenizerVersion.objects.filter(pk=pk).update(standard_layout=self.standard_layout)

    def cached_tokenizer(self) -> CoreTokenizer:
        """This version's core tokenizer, kept in memory in this process and keyed by digest (at
        most ``LOADED_TOKENIZERS`` of them; the least recently used goes first), so that encoding
        on request neither reloads rows nor starts from a cold pre-token cache."""
        tokenizer = _LOADED.get(self.digest)
        if tokenizer is None:
            tokenizer = _LOADED.put(self.digest, self.load_tokenizer())
        return tokenizer

    def token_length_histogram(self) -> list[tuple[int, int]]:
        """``(length in bytes, number of tokens)``, shortest first, special tokens left out."""
        return token_length_histogram(self.cached_tokenizer())

    def load_tokenizer(self) -> CoreTokenizer:
        """Rebuild the core ``Tokenizer`` from the rows; rows that no longer give the recorded
        digest (a row lost or changed) raise ``Damaged``: a damaged version is never
        served, exported or evaluated. A version of another library's kind is loaded from its
        canonical file instead (``load_engine``)."""
        if self.algorithm in ENGINE_KINDS:
            return self.load_engine()
        try:
            vocab, merges, counts, special_ids = self.read_contents()
            tokenizer = CoreTokenizer(vocab, merges, special_ids, self.pattern,
                                      merge_counts=counts)
        except (ValueError, KeyError) as exc:
            raise Damaged(f"damaged version {self.label}: its rows no longer make a "
                                 f"tokenizer ({exc}); it is not served. Run manage.py "
                                 f"verify") from None
        if self.digest and content_digest(tokenizer) != self.digest:
            raise Damaged(f"damaged version {self.label}: its rows give another digest "
                                 f"than the {self.digest[:12]}… recorded when it was made (a "
                                 f"merge or vocab row was lost or changed); it is not served. "
                                 f"Run manage.py verify")
        return tokenizer

    def read_contents(self):
        """``(vocab, merges, merge counts or None, special ids)`` read from the rows: plain tuples
        in rank order, no ORM objects. A vocab in the standard layout is derived from the merges
        instead of read (its rows hold the same)."""
        merges = fetch_rows(f"SELECT {q('left')}, {q('right')}, {q('count')} FROM "
                            f"{q(MergeRule._meta.db_table)} WHERE version_id = %s "
                            f"ORDER BY {q('rank')}", self.pk)
        counts = [count for _, _, count in merges]
        counts = None if None in counts else counts
        merges = [(left, right) for left, right, _ in merges]
        if self.standard_layout:
            specials = list(self.special_tokens)
            return (build_vocab(merges, specials), merges, counts,
                    {token: i for i, token in enumerate(specials)})
        vocab = dict(fetch_rows(f"SELECT token_id, token FROM {q(VocabEntry._meta.db_table)} "
                                f"WHERE version_id = %s", self.pk))
        special = fetch_rows(f"SELECT token, token_id FROM {q(VocabEntry._meta.db_table)} "
                             f"WHERE version_id = %s AND kind = %s", self.pk,
                             VocabEntry.Kind.SPECIAL.value)
        special_ids = {bytes(token).decode(): token_id for token, token_id in special}
        return vocab, merges, counts, {token: special_ids[token] for token in self.special_tokens}
