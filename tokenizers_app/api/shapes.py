"""The JSON shapes of registry records, shared by the API and the commands' ``--json``."""

from ..bpe.metrics import METRICS
from ..models import Corpus, Evaluation, Tokenizer, TokenizerVersion, TrainingRun


def tokenizer_shape(tokenizer: Tokenizer) -> dict:
    """A tokenizer from ``Tokenizer.objects.with_latest()`` (its ready versions and latest)."""
    aliases = {alias.name: alias.version.number for alias in tokenizer.aliases.all()}
    return {"name": tokenizer.name, "description": tokenizer.description,
            "versions": tokenizer.ready_versions, "latest": tokenizer.latest,
            "aliases": aliases, "created_at": tokenizer.created_at}


def version_shape(version: TokenizerVersion, evaluations=None) -> dict:
    """A version with its metrics per evaluation corpus (``evaluations``: its Evaluation rows;
    None leaves them out) and its lineage."""
    shape = {"tokenizer": version.tokenizer.name, "number": version.number,
             "ref": version.label, "algorithm": version.algorithm, "pattern": version.pattern,
             "special_tokens": version.special_tokens, "vocab_size": version.vocab_size,
             "merges": version.merge_count, "digest": version.digest,
             "lifecycle": version.lifecycle, "notes": version.notes,
             "aliases": [alias.name for alias in version.aliases.all()],
             "created_at": version.created_at, "lineage": version.lineage()}
    if evaluations is not None:
        shape["metrics"] = {e.corpus.name: evaluation_shape(e) for e in evaluations}
    return shape


def evaluation_shape(evaluation: Evaluation) -> dict:
    return {"corpus": evaluation.corpus.name, "corpus_sha256": evaluation.corpus.sha256,
            "status": evaluation.status, "error": evaluation.error,
            "metrics": {k: v for k, v in evaluation.metrics.items()}}


def corpus_shape(corpus: Corpus) -> dict:
    return {"name": corpus.name, "sha256": corpus.sha256, "size_bytes": corpus.size_bytes,
            "line_count": corpus.line_count, "char_count": corpus.char_count,
            "scripts": corpus.scripts, "evaluation": corpus.is_evaluation,
            "original_filename": corpus.original_filename, "created_at": corpus.created_at}


def run_shape(run: TrainingRun) -> dict:
    return {"id": run.pk, "tokenizer": run.tokenizer.name, "status": run.status,
            "stage": run.stage, "progress_done": run.progress_done,
            "progress_total": run.progress_total, "merges_per_second": run.merges_per_second,
            "stage_seconds": run.stage_seconds, "error": run.error,
            "algorithm": run.algorithm, "vocab_size": run.vocab_size, "pattern": run.pattern,
            "special_tokens": run.special_tokens, "min_frequency": run.min_frequency,
            "sweep": run.sweep, "corpora": [c.name for c in run.corpora.all()],
            "versions": [v.label for v in run.versions.all()],
            "created_at": run.created_at, "finished_at": run.finished_at}


def comparison_shape(versions: list, corpus: Corpus) -> dict:
    """Every metric of each version on one corpus, with its unit and which direction is
    better (``null`` for a version not evaluated there yet)."""
    found = Evaluation.objects.of(versions, corpus)
    return {"corpus": corpus.name, "corpus_sha256": corpus.sha256,
            "metrics": {name: {"label": label, "unit": unit, "higher_is_better": higher}
                        for name, (label, unit, higher) in METRICS.items()},
            "versions": [{"ref": v.label, "vocab_size": v.vocab_size,
                          "status": found[v.pk].status if v.pk in found else "not evaluated",
                          "metrics": found[v.pk].metrics if v.pk in found else None}
                         for v in versions]}
