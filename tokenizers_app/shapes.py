"""The JSON shapes of registry records, as typed schemas: the API answers with them (so its
OpenAPI document names every property) and the commands print them with ``--json``.

Each shape is built from its record by ``Shape.of(record)``; ``shape.model_dump()`` gives the
plain data (datetimes stay datetimes: the API writes them as ISO 8601, the commands as text).
"""

from __future__ import annotations

from datetime import datetime

from ninja import Schema

from .bpe.metrics import METRICS
from .models import Corpus, Evaluation, Tokenizer, TokenizerVersion, TrainingRun

Metrics = dict[str, int | float | None]  # metric name -> value (see ``bpe.metrics.METRICS``)


class TokenizerOut(Schema):
    name: str
    description: str
    versions: int  # how many ready versions
    latest: int | None  # the number of the latest ready version
    aliases: dict[str, int]  # alias -> version number
    created_at: datetime

    @classmethod
    def of(cls, tokenizer: Tokenizer) -> TokenizerOut:
        """From ``Tokenizer.objects.with_latest()`` (its ready versions and latest), with its
        ``aliases__version`` prefetched."""
        return cls(name=tokenizer.name, description=tokenizer.description,
                   versions=tokenizer.ready_versions, latest=tokenizer.latest,
                   aliases={alias.name: alias.version.number for alias in tokenizer.aliases.all()},
                   created_at=tokenizer.created_at)


class EvaluationProgressOut(Schema):
    bytes_done: int
    bytes: int  # what it reads: the corpus, or the first EVALUATION_MAX_BYTES
    parts_done: int
    parts: int  # 0: evaluated in one task
    seconds_left: int | None  # None until a rate is known


class EvaluationOut(Schema):
    corpus: str
    corpus_sha256: str
    status: str  # queued, running, succeeded, failed, cancelled
    error: str
    metrics: Metrics
    progress: EvaluationProgressOut | None = None  # while running

    @classmethod
    def of(cls, evaluation: Evaluation) -> EvaluationOut:
        return cls(corpus=evaluation.corpus.name, corpus_sha256=evaluation.corpus.sha256,
                   status=evaluation.status, error=evaluation.error,
                   metrics=dict(evaluation.metrics), progress=evaluation.progress)


class SourceCorpusOut(Schema):
    name: str
    sha256: str
    size_bytes: int
    weight: int = 1  # its counts multiplied by this before merging


class RunParametersOut(Schema):
    """A run's parameters (``bpe.parameters.TrainingParameters.public``): the one shape of
    them, in a run's answer and a version's lineage."""

    algorithm: str  # a kind that trains (engines.registry)
    lowercase: bool | None = None  # these three: character-level BPE's (null for byte-level)
    split: str | None = None
    min_word_frequency: int | None = None
    vocab_size: int
    pattern: str  # byte-level BPE's regex ("" for character-level BPE)
    special_tokens: list[str]
    min_frequency: int
    sweep: list[int]


class SourceRunOut(RunParametersOut):
    """The run that trained a version: its corpora, parameters and timings."""

    id: int
    stage_seconds: dict[str, float]
    merges_per_second: float | None
    corpora: list[SourceCorpusOut]
    extends: str | None = None  # an extension run: its parent version


class LineageOut(Schema):
    source: str  # trained, imported
    source_detail: str
    digest: str
    created_at: str
    created_by: str | None
    training_run: SourceRunOut | None
    extends: str | None = None  # NAME@NUMBER of the parent, for an extension run's version


class VersionOptionsOut(Schema):
    """What a character-level version keeps beside its split (all null for byte-level)."""

    lowercase: bool | None = None
    unk_token: str | None = None
    end_of_word_suffix: str | None = None


class VersionOut(Schema):
    tokenizer: str
    number: int
    ref: str  # NAME@NUMBER
    algorithm: str  # its kind (engines.registry)
    # as it always was: byte-level BPE's regex, character-level BPE's split (whitespace, word_punct), a library
    # tokenizer's description (TokenizerVersion.shown_pattern; the row keeps each in its field)
    pattern: str
    options: VersionOptionsOut  # character-level BPE: lowercase, unk_token, end_of_word_suffix
    special_tokens: list[str]
    vocab_size: int
    merges: int
    digest: str
    lifecycle: str
    notes: str
    aliases: list[str]
    created_at: datetime
    lineage: LineageOut

    @classmethod
    def of(cls, version: TokenizerVersion, **more) -> VersionOut:
        return cls(tokenizer=version.tokenizer.name, number=version.number, ref=version.label,
                   algorithm=version.algorithm, pattern=version.shown_pattern,
                   options=VersionOptionsOut(**version.options), special_tokens=version.special_tokens, vocab_size=version.vocab_size,
                   merges=version.merge_count, digest=version.digest,
                   lifecycle=version.lifecycle, notes=version.notes,
                   aliases=[alias.name for alias in version.aliases.all()],
                   created_at=version.created_at, lineage=version.lineage(), **more)


class VersionImportOut(VersionOut):
    # for GPT-2 files (which hold no pattern): the pattern the version got, given or assumed
    pattern_note: str | None = None


class VersionDetailOut(VersionOut):
    """A version with its evaluations, by corpus name."""

    metrics: dict[str, EvaluationOut]

    @classmethod
    def of(cls, version: TokenizerVersion, **more) -> VersionDetailOut:
        evaluations = (version.evaluations.without_word_tokens().select_related("corpus")
                       .order_by("corpus__name"))
        return super().of(version, metrics={e.corpus.name: EvaluationOut.of(e)
                                            for e in evaluations}, **more)


class CorpusOut(Schema):
    name: str
    sha256: str
    size_bytes: int
    line_count: int
    char_count: int
    scripts: dict[str, float]  # share of letters per Unicode script
    language: str  # BCP 47 tag, "" when not given
    evaluation: bool
    original_filename: str
    created_at: datetime

    @classmethod
    def of(cls, corpus: Corpus) -> CorpusOut:
        return cls(name=corpus.name, sha256=corpus.sha256, size_bytes=corpus.size_bytes,
                   line_count=corpus.line_count, char_count=corpus.char_count,
                   scripts=corpus.scripts, language=corpus.language,
                   evaluation=corpus.is_evaluation,
                   original_filename=corpus.original_filename, created_at=corpus.created_at)


class CorpusUploadOut(CorpusOut):
    # set when the bytes were already a corpus of another name: "these bytes are already
    # corpus web; the name web-2 was not used"
    name_not_used: str | None = None

    @classmethod
    def of(cls, corpus: Corpus, *, asked_name: str = "") -> CorpusUploadOut:
        return cls(**CorpusOut.of(corpus).dict(),
                   name_not_used=corpus.name_not_used(asked_name) if asked_name else None)


class RunOut(RunParametersOut):
    id: int
    tokenizer: str
    status: str  # queued, running, succeeded, failed, cancelled
    stage: str
    progress_done: int
    progress_total: int
    merges_per_second: float | None
    stage_seconds: dict[str, float]
    core_path: str  # the BPE core that ran it: "compiled (Cython)" or "pure Python (...)"
    error: str
    corpora: list[str]
    corpus_weights: dict[str, int] = {}  # the corpora weighing more than 1 (name -> weight)
    versions: list[str]  # NAME@NUMBER of the versions it made
    extends: str | None = None  # an extension run: NAME@NUMBER of the parent version
    created_at: datetime
    finished_at: datetime | None

    @classmethod
    def of(cls, run: TrainingRun) -> RunOut:
        return cls(**run.params.public(), id=run.pk, tokenizer=run.tokenizer.name,
                   status=run.status, stage=run.stage, progress_done=run.progress_done,
                   progress_total=run.progress_total, merges_per_second=run.merges_per_second,
                   stage_seconds=run.stage_seconds, core_path=run.core_path, error=run.error,
                   corpora=[c.name for c in run.corpora.all()],
                   corpus_weights=run.corpus_weights,
                   versions=[v.label for v in run.versions.all()],
                   extends=run.extends.label if run.extends_id else None,
                   created_at=run.created_at, finished_at=run.finished_at)


class GateCheckOut(Schema):
    name: str  # ids, goldens, metrics
    passed: bool
    detail: str


class AliasOut(Schema):
    tokenizer: str
    alias: str
    version: int  # the number it points at
    gate_tolerance: float | None = None  # null: no gate
    gate_checks: list[GateCheckOut] = []  # the gate's checks at this move
    forced_reason: str = ""  # set when staff forced a move the gate refused


class GoldenOut(Schema):
    id: int
    text: str
    ids: list[int]
    pinned_from: str  # NAME@NUMBER
    kept: bool  # whether the version asked about gives the text these ids

    @classmethod
    def of(cls, golden, kept: bool) -> GoldenOut:
        return cls(id=golden.pk, text=golden.text, ids=golden.ids,
                   pinned_from=golden.pinned_from.label, kept=kept)


class MetricOut(Schema):
    """One metric of a comparison: what it is, and the refs of the versions with the best value
    (empty while fewer than two versions have one)."""

    label: str
    unit: str
    higher_is_better: bool
    best: list[str]


class ComparedVersionOut(Schema):
    ref: str
    vocab_size: int
    status: str  # the evaluation's status, or "not evaluated"
    metrics: Metrics | None  # None until it is evaluated


class ComparisonOut(Schema):
    """Every metric of each version on one evaluation corpus, with its unit, which direction is
    better and which versions are best."""

    corpus: str
    corpus_sha256: str
    metrics: dict[str, MetricOut]
    versions: list[ComparedVersionOut]

    @classmethod
    def of(cls, comparison) -> ComparisonOut:
        """From a ``services.comparisons.Comparison``."""
        refs = [version.label for version in comparison.versions]
        best = {row.name: [ref for ref, is_best in zip(refs, row.best) if is_best]
                for row in comparison.rows}
        return cls(corpus=comparison.corpus.name, corpus_sha256=comparison.corpus.sha256,
                   metrics={name: MetricOut(label=label, unit=unit, higher_is_better=higher,
                                            best=best[name])
                            for name, (label, unit, higher) in METRICS.items()},
                   versions=[ComparedVersionOut(
                       ref=version.label, vocab_size=version.vocab_size,
                       status=evaluation.status if evaluation else "not evaluated",
                       metrics=evaluation.metrics if evaluation else None)
                       for version, evaluation in comparison.columns])

