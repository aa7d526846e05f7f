"""A version's contents as rows: its merge table (``MergeRule``) and vocabulary (``VocabEntry``);
and for the kinds another library encodes (``hf``, ``sentencepiece``), the canonical file that
library loads (``EngineFile``)."""

from __future__ import annotations

from django.db import connection, models
from django.db.models import Value
from django.db.models.functions import Length, Mod

from tokenizers_app.bpe.canonical import VOCAB_KINDS

# MergeRule and VocabEntry rows are bulk rows: 100k per version, written once by
# ``TokenizerVersion.write_contents`` in the transaction that creates their version, deleted with
# it by the ORM's cascade. Their primary key is (version, rank) / (version, token_id), and their
# version column has no database-level foreign key: checking one per row at commit would double
# the time to write a version (see bench/db_roundtrip.py).

class MergeRuleQuerySet(models.QuerySet):
    def count_chart(self, every: int) -> dict[str, list[int]]:
        """The merges whose rank is a multiple of ``every`` and that have a count, in rank order,
        for a chart of count against rank: ``{"ranks": [0, 100, ...], "counts": [...]}`` (one
        query; empty lists for an imported version, which has no counts)."""
        rows = (self.filter(count__isnull=False).alias(rank_mod=Mod("rank", Value(every)))
                .filter(rank_mod=0).order_by("rank").values_list("rank", "count"))
        ranks, counts = zip(*rows) if rows else ((), ())
        return {"ranks": list(ranks), "counts": list(counts)}


    def containing(self, needle: bytes):
        """The merges whose result (``left + right``) holds these bytes (all for ``b""``)."""
        if not needle:
            return self
        if connection.vendor == "postgresql":
            return self.extra(where=['position(%s::bytea in ("left" || "right")) > 0'],
                              params=[needle])
        return self.extra(where=['instr(CAST("left" || "right" AS BLOB), %s) > 0'],
                          params=[needle])


class MergeRule(models.Model):
    """Merge ``rank`` of a version: ``left + right`` becomes one token; lower ranks apply first.
    ``count`` is the pair's count when training chose it (empty for imported tokenizers)."""

    pk = models.CompositePrimaryKey("version", "rank")
    version = models.ForeignKey("TokenizerVersion", on_delete=models.CASCADE, db_constraint=False,
                                db_index=False, related_name="merge_rules")
    rank = models.IntegerField()
    left = models.BinaryField()
    right = models.BinaryField()
    count = models.BigIntegerField(null=True, blank=True)

    objects = MergeRuleQuerySet.as_manager()

    @property
    def result(self) -> bytes:
        """The token this merge makes: ``left + right`` (Postgres gives memoryviews)."""
        return bytes(self.left) + bytes(self.right)


class VocabQuerySet(models.QuerySet):
    def containing(self, needle: bytes):
        """The entries whose token holds these bytes (all of them for ``b""``)."""
        if not needle:
            return self
        if connection.vendor == "postgresql":
            return self.extra(where=["position(%s::bytea in token) > 0"], params=[needle])
        return self.extra(where=["instr(token, %s) > 0"], params=[needle])


    def learned(self):
        """The tokens training learned, or an import added: neither special nor single bytes
        (nor a character-level alphabet's symbols); an engine's ordinary pieces."""
        return self.filter(kind__in=[VocabEntry.Kind.MERGE, VocabEntry.Kind.ADDED,
                                     VocabEntry.Kind.NORMAL])

    def by(self, sort: str):
        """In rank (token id) order, or ``"length"``: longest first, then by id."""
        if sort == "length":
            return self.order_by(Length("token").desc(), "token_id")
        return self.order_by("token_id")


class VocabEntry(models.Model):
    """Token ``token_id`` of a version and its bytes. ``kind``: a special token, one of the 256
    single bytes, the result of a merge, ``added`` (neither: an imported extra token), or a
    symbol of a character-level alphabet (its text's UTF-8, ``</w>`` included); for the ``hf``
    and ``sentencepiece`` kinds (whose tokens are the library's pieces, ``"▁the"``, in UTF-8)
    also ``normal``, ``unknown`` (``<unk>``, ``[UNK]``), ``control`` (SentencePiece's ``<s>``)
    and ``byte`` for a ``<0xNN>`` piece. ``score``: a SentencePiece piece's score."""

    class Kind(models.TextChoices):  # the core's VOCAB_KINDS, in its order, then the engines'
        SPECIAL = VOCAB_KINDS[0]
        BYTE = VOCAB_KINDS[1]
        MERGE = VOCAB_KINDS[2]
        ADDED = VOCAB_KINDS[3]
        SYMBOL = VOCAB_KINDS[4]  # a character of a character-level alphabet (``w``, ``w</w>``)
        NORMAL = "normal"
        UNKNOWN = "unknown"
        CONTROL = "control"

    pk = models.CompositePrimaryKey("version", "token_id")
    version = models.ForeignKey("TokenizerVersion", on_delete=models.CASCADE, db_constraint=False,
                                db_index=False, related_name="vocab_entries")
    token_id = models.IntegerField()
    token = models.BinaryField()
    kind = models.CharField(max_length=7, choices=Kind.choices)
    score = models.FloatField(null=True, blank=True)

    objects = VocabQuerySet.as_manager()

    class Meta:
        verbose_name_plural = "vocab entries"


class EngineFile(models.Model):
    """The canonical file of a version that another library encodes (a ``tokenizer.json`` as
    Hugging Face ``tokenizers`` writes it, a SentencePiece model's bytes), named by its content:
    ``digest`` is the version's (``engines.engine_digest``), so versions of the same content,
    under any tokenizer, share one file. Written once, never changed."""

    digest = models.CharField(max_length=64, unique=True)
    kind = models.CharField(max_length=20)
    content = models.BinaryField()
    size_bytes = models.PositiveBigIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.kind} file {self.digest[:12]}… ({self.size_bytes} bytes)"
