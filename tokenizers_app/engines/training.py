"""How each of our core's kinds counts, trains and extends (``CoreKind``'s training half): the
registry's ``ByteBPE`` and ``CharBPE`` take theirs from ``ByteTraining`` and ``CharTraining``.
Every trainer takes the run's checked ``TrainingParameters`` whole (``bpe.parameters``); the
services pass plain values (paths, counts, callbacks), never a model."""

from __future__ import annotations

from collections import Counter

from ..bpe.char_bpe import (CharTrainResult, count_words_range, merge_chars,
                            prefix_char_tokenizer, train_chars)
from ..bpe.char_tokenizer import UNK
from ..bpe.char_extension import extend_char_bpe, extend_char_from_counts
from ..bpe.counting import count_range
from ..bpe.extension import extend_bpe, extend_from_counts
from ..bpe.parameters import BYTE_ONLY, CHAR_ONLY, TrainingParameters
from ..bpe.training import TrainResult, merge_bytes, prefix_tokenizer, train_bytes
from .kind import CoreKind

Trained = TrainResult | CharTrainResult  # what a core kind's trainers return


class ByteTraining(CoreKind):
    """Byte-level BPE: pre-tokens cut by its regex, counted as UTF-8 bytes."""

    default_special_tokens = ("<|endoftext|>",)
    parameter_fields = BYTE_ONLY
    has_regex = True  # its pattern is a regex, tried on the corpora before a run is queued

    def cut_pattern(self, params: TrainingParameters) -> str:
        return params.pattern

    def count_range(self, source, start: int, end: int, params: TrainingParameters,
                    tick=None) -> Counter:
        return count_range(source, start, end, params.pattern, params.special_tokens, tick)

    def train(self, source, params: TrainingParameters, *, progress=None, should_stop=None,
              max_pretoken_bytes: int | None = None, weights=None):
        return train_bytes(source, params, progress=progress, should_stop=should_stop,
                           max_pretoken_bytes=max_pretoken_bytes, weights=weights)

    def train_counted(self, counts: dict[bytes, int], params: TrainingParameters, *,
                      progress=None, should_stop=None, max_pretoken_bytes: int | None = None):
        return merge_bytes(counts, params, progress=progress, should_stop=should_stop,
                           max_pretoken_bytes=max_pretoken_bytes)

    def extend(self, parent, source, params: TrainingParameters, *, progress=None,
               should_stop=None):
        return extend_bpe(parent, source, params, progress=progress, should_stop=should_stop)

    def extend_counted(self, parent, counts: dict[bytes, int], params: TrainingParameters, *,
                       progress=None, should_stop=None):
        return extend_from_counts(parent, counts, params, progress=progress,
                                  should_stop=should_stop)

    def prefix(self, tokenizer, vocab_size: int):
        return prefix_tokenizer(tokenizer, vocab_size)

    def extension_prefix(self, full, vocab_size: int, *, parent_vocab_size: int):
        """The first ``vocab_size - parent_vocab_size`` new ids of an extension: one new id per
        new merge after the parent's largest id."""
        new = sorted(full.vocab)[parent_vocab_size:]
        dropped = set(new[vocab_size - parent_vocab_size:])
        merges = full.merges[:len(full.merges) - len(dropped)]
        counts = full.merge_counts[:len(merges)] if full.merge_counts else None
        return type(full)({i: t for i, t in full.vocab.items() if i not in dropped}, merges,
                          full.special_ids, full.pattern, merge_counts=counts)


class CharTraining(CoreKind):
    """Character-level BPE: words cut by its split (lowercased when asked), counted as text."""

    default_special_tokens = (UNK,)
    parameter_fields = CHAR_ONLY
    no_sweep_reason = ("a sweep of a character-level extension is not built (its new characters "
                       "come before its new merges)")

    def cut_pattern(self, params: TrainingParameters) -> str:
        return "gpt2"  # cut at lines, as byte-level BPE's default

    def count_range(self, source, start: int, end: int, params: TrainingParameters,
                    tick=None) -> Counter:
        return count_words_range(source, start, end, params.split, params.lowercase,
                                 params.special_tokens, tick)

    def train(self, source, params: TrainingParameters, *, progress=None, should_stop=None,
              max_pretoken_bytes: int | None = None, weights=None):
        return train_chars(source, params, progress=progress, should_stop=should_stop,
                           max_word_bytes=max_pretoken_bytes, weights=weights)

    def train_counted(self, counts: dict[bytes, int], params: TrainingParameters, *,
                      progress=None, should_stop=None, max_pretoken_bytes: int | None = None):
        return merge_chars({word.decode(): count for word, count in counts.items()}, params,
                           progress=progress, should_stop=should_stop,
                           max_word_bytes=max_pretoken_bytes)

    def extend(self, parent, source, params: TrainingParameters, *, progress=None,
               should_stop=None):
        return extend_char_bpe(parent, source, params, progress=progress,
                               should_stop=should_stop)

    def extend_counted(self, parent, counts: dict[bytes, int], params: TrainingParameters, *,
                       progress=None, should_stop=None):
        return extend_char_from_counts(parent, {w.decode(): c for w, c in counts.items()},
                                       params, progress=progress, should_stop=should_stop)

    def prefix(self, tokenizer, vocab_size: int):
        return prefix_char_tokenizer(tokenizer, vocab_size)
