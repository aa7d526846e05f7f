"""The core's trainers, each taking a run's checked ``TrainingParameters`` whole: ``train`` on a
source, ``train_counted`` on counts summed from several workers. The parameters say which
algorithm trains (``params.algorithm``); nothing here checks them again (they are checked once,
by ``check_training_parameters``, the core's public entry)."""

from __future__ import annotations

from .char_bpe import CharTrainResult, merge_chars, train_chars
from .parameters import TrainingParameters
from .training import Progress, ShouldStop, TrainResult, merge_bytes, train_bytes


def train(source, params: TrainingParameters, *, progress: Progress | None = None,
          should_stop: ShouldStop | None = None, max_pretoken_bytes: int | None = None,
          weights=None) -> TrainResult | CharTrainResult:
    """Train on a source (see ``corpus.iter_documents``); ``max_pretoken_bytes`` bounds the
    longest pre-token (byte-level) or word (character-level) merged."""
    if params.algorithm == "char_bpe":
        return train_chars(source, params, progress=progress, should_stop=should_stop,
                           max_word_bytes=max_pretoken_bytes, weights=weights)
    return train_bytes(source, params, progress=progress, should_stop=should_stop,
                       max_pretoken_bytes=max_pretoken_bytes, weights=weights)


def train_counted(counts: dict[bytes, int], params: TrainingParameters, *,
                  progress: Progress | None = None, should_stop: ShouldStop | None = None,
                  max_pretoken_bytes: int | None = None) -> TrainResult | CharTrainResult:
    """Train on counts (UTF-8 bytes -> count: pre-tokens, or character-level words)."""
    if params.algorithm == "char_bpe":
        return merge_chars({word.decode(): count for word, count in counts.items()}, params,
                           progress=progress, should_stop=should_stop,
                           max_word_bytes=max_pretoken_bytes)
    return merge_bytes(counts, params, progress=progress, should_stop=should_stop,
                       max_pretoken_bytes=max_pretoken_bytes)
