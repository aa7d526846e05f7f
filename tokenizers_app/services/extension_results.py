"""The work of an extension run in a worker: load the parent version and continue its merges
on the run's corpus files (``extend_files``) or on counts fanned out to several workers
(``extend_counts``), through the run's kind (``engines.registry``). Started by
``services.extensions``."""

from __future__ import annotations

from functools import partial

from ..models import TrainingRun


def extend_files(*, run: TrainingRun, paths, reporter):
    """The result of an extension run over its corpus files (counted in this worker; a
    SentencePiece or tokenizer.json parent's files are segmented by its library, in this
    worker's sandbox child: ``library_extensions``)."""
    if is_library_run(run):
        from .library_extensions import extend_library_files

        return extend_library_files(run=run, paths=paths, reporter=reporter)
    return run.kind.extend(run.extends.load_tokenizer(), paths, run.params,
                           progress=reporter.progress, should_stop=reporter.should_stop)


def is_library_run(run: TrainingRun) -> bool:
    """An extension run of a kind whose counting is not fanned out (a SentencePiece or
    tokenizer.json BPE version: counted in one worker by its library's segmentation, where a
    fanned-out count is of pre-tokens)."""
    return run.extends_id is not None and not run.kind.fans_out


def extend_counts(*, run: TrainingRun, counts: dict[bytes, int], reporter):
    """The result of an extension run over counts fanned out to several workers."""
    return run.kind.extend_counted(run.extends.load_tokenizer(), counts, run.params,
                                   progress=reporter.progress,
                                   should_stop=reporter.should_stop)


def sweep_prefix(run: TrainingRun):
    """What makes a sweep's smaller version from a run's full tokenizer: the first merges of a
    training run; the parent whole and the first new ids of an extension run (of a kind whose
    extensions sweep: ``kind.sweeps``)."""
    if run.extends_id is not None:
        return partial(run.kind.extension_prefix, parent_vocab_size=run.extends.vocab_size)
    return run.kind.prefix
