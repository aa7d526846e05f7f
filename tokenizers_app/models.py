"""Records: corpora, training runs, tokenizers and their immutable versions, aliases, evaluations.

A version's merge table and vocabulary are rows (``MergeRule``, ``VocabEntry``), so they can be
browsed, searched and diffed in SQL. They are written once, in the transaction that creates the
version (COPY on Postgres), and read back in rank order by ``TokenizerVersion.load_tokenizer``.
"""

from __future__ import annotations

import hashlib
import struct
from pathlib import Path

import regex
from django.conf import settings
from django.db import connection, models
from django.utils import timezone

from tokenizers_app.bpe import Tokenizer as CoreTokenizer
from tokenizers_app.bpe.training import build_vocab

_NAME = regex.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def check_name(kind: str, name) -> str:
    """``check_name("tokenizer", "web-en-32k") -> "web-en-32k"``; other names raise ValueError."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(f"{kind} name {name!r} is not valid: use 1-100 letters, digits, '.', '_' "
                         f"or '-', starting with a letter or digit")
    return name


# -- corpora --------------------------------------------------------------------------------------

class CorpusQuerySet(models.QuerySet):
    def by_names(self, names) -> list[Corpus]:
        """The corpora with these names, in order; an unknown name raises ValueError."""
        names = list(names)
        found = {c.name: c for c in self.filter(name__in=names)}
        for name in names:
            if name not in found:
                known = ", ".join(self.order_by("name").values_list("name", flat=True)[:20])
                raise ValueError(f"no corpus named {name!r} (known corpora: {known or 'none'}); "
                                 f"import it first with `manage.py import_corpus PATH --name NAME`")
        return [found[name] for name in names]

    def for_evaluation(self):
        return self.filter(is_evaluation=True)


class Corpus(models.Model):
    """A text file, content-addressed: the same bytes imported twice are one corpus."""

    name = models.CharField(max_length=100, unique=True)
    original_filename = models.CharField(max_length=255, blank=True)
    file = models.FileField(upload_to="corpora/", max_length=255)  # server-generated name
    size_bytes = models.BigIntegerField()
    sha256 = models.CharField(max_length=64, unique=True)
    line_count = models.BigIntegerField()
    char_count = models.BigIntegerField()
    scripts = models.JSONField(default=dict, blank=True,
                               help_text="share of letters per Unicode script")
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
    def path(self) -> Path:
        return Path(self.file.path)


# -- training runs --------------------------------------------------------------------------------

class TrainingRun(models.Model):
    """One training job. Its state lives here; workers update it at least once a second."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"
        CANCELLED = "cancelled"

    FINISHED = (Status.SUCCEEDED, Status.FAILED, Status.CANCELLED)

    tokenizer = models.ForeignKey("Tokenizer", on_delete=models.PROTECT, related_name="runs")
    corpora = models.ManyToManyField(Corpus, related_name="runs")
    algorithm = models.CharField(max_length=20, default="byte_bpe")
    pattern = models.TextField(default="gpt2")
    vocab_size = models.PositiveIntegerField()
    special_tokens = models.JSONField(default=list, blank=True)
    min_frequency = models.PositiveIntegerField(default=1)
    options = models.JSONField(default=dict, blank=True,
                               help_text='e.g. {"sweep": [8000, 16000]}')
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED,
                              db_index=True)
    stage = models.CharField(max_length=10, blank=True)  # count, merge, save
    progress_done = models.BigIntegerField(default=0)
    progress_total = models.BigIntegerField(default=0)
    merges_per_second = models.FloatField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    attempt = models.PositiveIntegerField(default=0)
    cancel_requested = models.BooleanField(default=False)
    error = models.TextField(blank=True)
    stage_seconds = models.JSONField(default=dict, blank=True)
    word_count = models.BigIntegerField(null=True, blank=True,
                                        help_text="distinct pre-tokens counted")
    pretoken_count = models.BigIntegerField(null=True, blank=True,
                                            help_text="pre-token occurrences counted")
    fanout_parts = models.PositiveIntegerField(default=0,
                                               help_text="count tasks (0: counted in one task)")
    versions = models.ManyToManyField("TokenizerVersion", blank=True, related_name="runs",
                                      help_text="the versions this run resulted in")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"run {self.pk} ({self.tokenizer_id and self.tokenizer.name}, {self.status})"

    @property
    def is_finished(self) -> bool:
        return self.status in self.FINISHED

    @property
    def sweep(self) -> list[int]:
        return list(self.options.get("sweep", []))

    def owned(self, attempt: int):
        """This run as a queryset, while ``attempt`` still owns it (running, same attempt)."""
        return TrainingRun.objects.filter(pk=self.pk, attempt=attempt,
                                          status=self.Status.RUNNING)


class CountPart(models.Model):
    """One byte range of a corpus counted by one task when counting fans out."""

    run = models.ForeignKey(TrainingRun, on_delete=models.CASCADE, related_name="count_parts")
    attempt = models.PositiveIntegerField()
    index = models.PositiveIntegerField()
    corpus = models.ForeignKey(Corpus, on_delete=models.CASCADE, related_name="+")
    start = models.BigIntegerField()
    end = models.BigIntegerField()
    done = models.BooleanField(default=False)
    worker = models.CharField(max_length=200, blank=True)
    counts_file = models.CharField(max_length=255, blank=True)  # under MEDIA_ROOT

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "attempt", "index"],
                                               name="count_part_unique_index")]

    @property
    def size(self) -> int:
        return self.end - self.start


# -- tokenizers and versions ----------------------------------------------------------------------

class Tokenizer(models.Model):
    """A name (``web-en-32k``) with numbered, immutable versions."""

    name = models.CharField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def latest_version(self) -> TokenizerVersion | None:
        return self.versions.ready().order_by("-number").first()


class VersionQuerySet(models.QuerySet):
    def ready(self):
        return self.filter(status=TokenizerVersion.Status.READY)

    def resolve(self, ref: str) -> TokenizerVersion:
        """``resolve("web-en@3")``, ``resolve("web-en@production")``; ``resolve("web-en")`` is the
        latest ready version. A ref that names nothing raises ValueError."""
        name, _, version_ref = str(ref).partition("@")
        tokenizer = Tokenizer.objects.filter(name=name).first()
        if tokenizer is None:
            raise ValueError(f"no tokenizer named {name!r}")
        versions = self.filter(tokenizer=tokenizer).ready()
        if not version_ref:
            found = versions.order_by("-number").first()
            if found is None:
                raise ValueError(f"tokenizer {name!r} has no ready version yet")
            return found
        if version_ref.isdigit():
            return self._by_number(versions, name, int(version_ref))
        alias = Alias.objects.filter(tokenizer=tokenizer, name=version_ref).first()
        if alias is None:
            known = ", ".join(tokenizer.aliases.values_list("name", flat=True)) or "none"
            raise ValueError(f"tokenizer {name!r} has no alias {version_ref!r} (aliases: {known})")
        return alias.version

    def _by_number(self, versions, name: str, number: int) -> TokenizerVersion:
        found = versions.filter(number=number).first()
        if found is None:
            numbers = list(versions.order_by("number").values_list("number", flat=True))
            raise ValueError(f"tokenizer {name!r} has no version {number} (versions: "
                             f"{', '.join(map(str, numbers)) or 'none'})")
        return found


class TokenizerVersion(models.Model):
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
    algorithm = models.CharField(max_length=20, default="byte_bpe")
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
            raise ValueError(f"version {self.pk} is ready and immutable; cannot change "
                             f"{', '.join(changed)}")

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

    def load_tokenizer(self) -> CoreTokenizer:
        """Rebuild the core ``Tokenizer`` from the rows."""
        vocab, merges, counts, special_ids = self.read_contents()
        return CoreTokenizer(vocab, merges, special_ids, self.pattern, merge_counts=counts)

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


# MergeRule and VocabEntry rows are bulk rows: 100k per version, written once by
# ``TokenizerVersion.write_contents`` in the transaction that creates their version, deleted with
# it by the ORM's cascade. Their primary key is (version, rank) / (version, token_id), and their
# version column has no database-level foreign key: checking one per row at commit would double
# the time to write a version (see bench/db_roundtrip.py).

class MergeRule(models.Model):
    """Merge ``rank`` of a version: ``left + right`` becomes one token; lower ranks apply first.
    ``count`` is the pair's count when training chose it (empty for imported tokenizers)."""

    pk = models.CompositePrimaryKey("version", "rank")
    version = models.ForeignKey(TokenizerVersion, on_delete=models.CASCADE, db_constraint=False,
                                db_index=False, related_name="merge_rules")
    rank = models.IntegerField()
    left = models.BinaryField()
    right = models.BinaryField()
    count = models.BigIntegerField(null=True, blank=True)


class VocabEntry(models.Model):
    """Token ``token_id`` of a version and its bytes. ``kind``: a special token, one of the 256
    single bytes, the result of a merge, or ``added`` (neither: an imported extra token)."""

    class Kind(models.TextChoices):
        SPECIAL = "special"
        BYTE = "byte"
        MERGE = "merge"
        ADDED = "added"

    pk = models.CompositePrimaryKey("version", "token_id")
    version = models.ForeignKey(TokenizerVersion, on_delete=models.CASCADE, db_constraint=False,
                                db_index=False, related_name="vocab_entries")
    token_id = models.IntegerField()
    token = models.BinaryField()
    kind = models.CharField(max_length=7, choices=Kind.choices)

    class Meta:
        verbose_name_plural = "vocab entries"


# -- aliases and evaluations ----------------------------------------------------------------------

class Alias(models.Model):
    """A movable pointer (``production``, ``candidate``) to one version of a tokenizer."""

    tokenizer = models.ForeignKey(Tokenizer, on_delete=models.CASCADE, related_name="aliases")
    name = models.CharField(max_length=50)
    version = models.ForeignKey(TokenizerVersion, on_delete=models.PROTECT, related_name="aliases")
    moved_at = models.DateTimeField(default=timezone.now)
    moved_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                 on_delete=models.SET_NULL, related_name="+")

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
    from_version = models.ForeignKey(TokenizerVersion, null=True, blank=True,
                                     on_delete=models.PROTECT, related_name="+")
    to_version = models.ForeignKey(TokenizerVersion, on_delete=models.PROTECT, related_name="+")
    moved_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                 on_delete=models.SET_NULL, related_name="+")
    moved_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-moved_at", "-id"]


class Evaluation(models.Model):
    """The metrics of one version on one corpus (see ``tokenizers_app.bpe.metrics``)."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    version = models.ForeignKey(TokenizerVersion, on_delete=models.CASCADE,
                                related_name="evaluations")
    corpus = models.ForeignKey(Corpus, on_delete=models.CASCADE, related_name="evaluations")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    metrics = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["version", "corpus"],
                                               name="evaluation_unique_pair")]


# -- content digest and row I/O -------------------------------------------------------------------

DIGEST_PREFIX = b"tokenizer-registry/content/v1\n"


def content_digest(tokenizer: CoreTokenizer) -> str:
    """sha256 over a canonical serialization of everything that decides the ids.

    Hashed in order, each text or byte string as a 4-byte big-endian length then its bytes,
    each number as 4 bytes: ``DIGEST_PREFIX``, the algorithm, the pattern (its name, or the
    regex source), the number of special tokens then each (id, UTF-8 text) in list order, the
    number of vocab entries then each (id, bytes) by id, the number of merges then each
    (left, right) by rank. Merge counts are not part of it: a tokenizer imported from a file
    without counts has the digest of the same tokenizer trained here.
    """
    h = hashlib.sha256(DIGEST_PREFIX)
    h.update(_field(tokenizer.algorithm.encode()) + _field(tokenizer.pattern.encode()))
    h.update(_number(len(tokenizer.special_ids)))
    for token, token_id in tokenizer.special_ids.items():
        h.update(_number(token_id) + _field(token.encode()))
    h.update(_number(len(tokenizer.vocab)))
    for token_id in sorted(tokenizer.vocab):
        h.update(_number(token_id) + _field(tokenizer.vocab[token_id]))
    h.update(_number(len(tokenizer.merges)))
    for left, right in tokenizer.merges:
        h.update(_field(left) + _field(right))
    return h.hexdigest()


def _number(n: int) -> bytes:
    return struct.pack(">I", n)


def _field(data: bytes) -> bytes:
    """``_field(b"ab") -> b"\\x00\\x00\\x00\\x02ab"``"""
    return struct.pack(">I", len(data)) + data


def has_standard_layout(tokenizer: CoreTokenizer) -> bool:
    """Whether the ids are special tokens (in order), the 256 bytes, then one per merge."""
    return (list(tokenizer.special_ids.values()) == list(range(len(tokenizer.special_ids)))
            and tokenizer.vocab == build_vocab(tokenizer.merges, tokenizer.special_tokens))


def vocab_kinds(tokenizer: CoreTokenizer):
    """``(token id, token bytes, kind)`` for every vocab entry, by id."""
    special_ids = set(tokenizer.special_ids.values())
    merged = {left + right for left, right in tokenizer.merges}
    special, byte, merge, added = (kind.value for kind in VocabEntry.Kind)
    for token_id, token in sorted(tokenizer.vocab.items()):
        if token_id in special_ids:
            yield token_id, token, special
        elif len(token) == 1:
            yield token_id, token, byte
        else:
            yield token_id, token, merge if token in merged else added


def q(name: str) -> str:
    return connection.ops.quote_name(name)


def bulk_insert(model, columns: list[str], rows) -> None:
    """Insert many rows fast: COPY on Postgres, ``executemany`` elsewhere."""
    table, names = q(model._meta.db_table), ", ".join(q(c) for c in columns)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with cursor.cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        else:
            marks = ", ".join(["%s"] * len(columns))
            cursor.executemany(f"INSERT INTO {table} ({names}) VALUES ({marks})", list(rows))


def fetch_rows(sql: str, *params) -> list[tuple]:
    """All rows of a query as tuples; on Postgres in binary form (bytea arrives as bytes, not as
    hex text to decode)."""
    if connection.vendor == "postgresql":
        import psycopg

        connection.ensure_connection()
        with psycopg.Cursor(connection.connection) as cursor:
            cursor.execute(sql, params, binary=True)
            return cursor.fetchall()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()
