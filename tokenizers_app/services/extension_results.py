"""The work of an extension run in a worker: load the parent version and continue its merges
on the run's corpus files (``extend_files``) or on counts fanned out to several workers
(``extend_counts``). Started by ``services.extensions``."""

from __future__ import annotations

from functools import partial

from ..bpe.char_bpe import prefix_char_tokenizer
from ..bpe.char_extension import extend_char_bpe, extend_char_from_counts
from ..bpe.extension import extend_bpe, extend_from_counts
from ..bpe.training import prefix_tokenizer
from ..models import Kind, TrainingRun


def extend_files(*, run: TrainingRun, paths, reporter):
    """The result of an extension run over its corpus files (counted in this worker; a
    SentencePiece or tokenizer.json parent's files are segmented by its library, in this
    worker's sandbox child: ``library_extensions``)."""
    if is_library_run(run):
        from .library_extensions import extend_library_files

        return extend_library_files(run=run, paths=paths, reporter=reporter)
    parent = run.extends.load_tokenizer()
    if run.algorithm == Kind.CHAR_BPE:
        return extend_char_bpe(parent, paths, run.vocab_size, run.min_frequency,
                               progress=reporter.progress, should_stop=reporter.should_stop)
    return extend_bpe(parent, paths, run.vocab_size, run.min_frequency,
                      progress=reporter.progress, should_stop=reporter.should_stop)


def is_library_run(run: TrainingRun) -> bool:
    """An extension run of a SentencePiece or tokenizer.json BPE version: counted in one worker
    by its library's segmentation, never fanned out (a fanned-out count is of pre-tokens)."""
    return run.extends_id is not None and run.algorithm in (Kind.SENTENCEPIECE, Kind.HF)


def extend_counts(*, run: TrainingRun, counts: dict[bytes, int], reporter):
    """The result of an extension run over counts fanned out to several workers."""
    parent = run.extends.load_tokenizer()
    if run.algorithm == Kind.CHAR_BPE:
        return extend_char_from_counts(parent, {w.decode(): c for w, c in counts.items()},
                                       run.vocab_size, run.min_frequency,
                                       progress=reporter.progress,
                                       should_stop=reporter.should_stop)
    return extend_from_counts(parent, counts, run.vocab_size, run.min_frequency,
                              progress=reporter.progress, should_stop=reporter.should_stop)


def prefix_extension(full, vocab_size: int, *, parent_vocab_size: int):
    """The tokenizer of an extension's first ``vocab_size - parent_vocab_size`` new ids (a
    byte-level extension: one new id per new merge after the parent's largest id)."""
    if full.algorithm != "byte_bpe":
        raise ValueError("a sweep of an extension run takes byte-level BPE only")
    new = sorted(full.vocab)[parent_vocab_size:]
    keep = vocab_size - parent_vocab_size
    dropped = set(new[keep:])
    merges = full.merges[:len(full.merges) - len(dropped)]
    counts = full.merge_counts[:len(merges)] if full.merge_counts else None
    return type(full)({i: t for i, t in full.vocab.items() if i not in dropped}, merges,
                      full.special_ids, full.pattern, merge_counts=counts)


def sweep_prefix(run: TrainingRun):
    """What makes a sweep's smaller version from a run's full tokenizer: the first merges of a
    training run; the parent whole and the first new ids of an extension run."""
    if run.extends_id is not None:
        return partial(prefix_extension, parent_vocab_size=run.extends.vocab_size)
    return prefix_char_tokenizer if run.algorithm == Kind.CHAR_BPE else prefix_tokenizer
