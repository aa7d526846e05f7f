"""The work of an extension run in a worker: load the parent version and continue its merges
on the run's corpus files (``extend_files``) or on counts fanned out to several workers
(``extend_counts``). Started by ``services.extensions``."""

from __future__ import annotations

from ..bpe.char_extension import extend_char_bpe, extend_char_from_counts
from ..bpe.extension import extend_bpe, extend_from_counts
from ..models import Algorithm, TrainingRun


def extend_files(*, run: TrainingRun, paths, reporter):
    """The result of an extension run over its corpus files (counted in this worker)."""
    parent = run.extends.load_tokenizer()
    if run.algorithm == Algorithm.CHAR_BPE:
        return extend_char_bpe(parent, paths, run.vocab_size, run.min_frequency,
                               progress=reporter.progress, should_stop=reporter.should_stop)
    return extend_bpe(parent, paths, run.vocab_size, run.min_frequency,
                      progress=reporter.progress, should_stop=reporter.should_stop)


def extend_counts(*, run: TrainingRun, counts: dict[bytes, int], reporter):
    """The result of an extension run over counts fanned out to several workers."""
    parent = run.extends.load_tokenizer()
    if run.algorithm == Algorithm.CHAR_BPE:
        return extend_char_from_counts(parent, {w.decode(): c for w, c in counts.items()},
                                       run.vocab_size, run.min_frequency,
                                       progress=reporter.progress,
                                       should_stop=reporter.should_stop)
    return extend_from_counts(parent, counts, run.vocab_size, run.min_frequency,
                              progress=reporter.progress, should_stop=reporter.should_stop)
