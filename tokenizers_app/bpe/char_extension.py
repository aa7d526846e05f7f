"""Extension of character-level BPE: the parent's ids kept, characters new to its alphabet next,
then new merges (``extension.py`` for byte-level BPE, whose rules this follows).

The words of the new corpus are split, lowercased and spelled as the parent does (``"low" ->
["l", "o", "w</w>"]``). Symbols the parent lacks (``"我</w>"``) get ids after the parent's largest,
sorted by UTF-8 bytes as training sorts its alphabet; then the parent's merges are applied and
the merge loop continues, a pair whose merged token is already a token never learned.

Its plain twin: ``reference_extend_char`` in tests/bpe/reference.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from .char_bpe import CharTrainResult, count_words, split_regex
from .char_tokenizer import CharBPETokenizer, word_symbols
from .compiled import learn_merges
from .extension import check_extension_size
from .parameters import TrainingParameters
from .training import Ticker, stop_reason


@dataclass
class CharExtensionResult(CharTrainResult):
    unk_token: str = "<unk>"

    def tokenizer(self) -> CharBPETokenizer:
        return CharBPETokenizer(self.vocab, self.merges, self.special_tokens, self.unk_token,
                                self.end_of_word_suffix, self.lowercase, self.split,
                                self.merge_counts)


def extend_char_bpe(parent: CharBPETokenizer, source, params: TrainingParameters, *,
                    progress=None, should_stop=None) -> CharExtensionResult:
    """Extend a character-level BPE tokenizer on a source to ``params.vocab_size`` tokens in
    all (``params``: the run's checked ``TrainingParameters``, whole; the parent's word split,
    case and special tokens are the ones used)."""
    check_extension_size(len(parent.vocab), params.vocab_size)
    counts = count_words(source, split_regex(parent.pattern), parent.lowercase,
                         parent.special_tokens, Ticker(progress, should_stop), workers=1)
    return extend_char_from_counts(parent, dict(counts), params, progress=progress,
                                   should_stop=should_stop)


def extend_char_from_counts(parent: CharBPETokenizer, counts: dict[str, int],
                            params: TrainingParameters, *, progress=None,
                            should_stop=None) -> CharExtensionResult:
    """The end of a character-level extension, from counted words (lowercased when the parent
    lowercases)."""
    vocab_size, min_frequency = params.vocab_size, params.min_frequency
    check_extension_size(len(parent.vocab), vocab_size)
    if not counts:
        raise ValueError("the corpus is empty: it holds no word to train on")
    vocab = dict(parent.symbols)
    vocab.update(new_symbols(parent, counts, max(vocab) + 1))
    wider = CharBPETokenizer(vocab, parent.symbol_merges, parent.special_tokens, parent.unk_token,
                             parent.suffix, parent.lowercase, parent.pattern)
    specials = set(parent.special_ids.values())
    ids = sorted(i for i in vocab if i not in specials)
    index_of = {token_id: n for n, token_id in enumerate(ids)}
    words: dict[tuple[int, ...], int] = {}
    for word, count in counts.items():
        spelled = tuple(index_of[i] for i in wider.bpe(word))
        if len(spelled) > 1:
            words[spelled] = words.get(spelled, 0) + count
    wanted = max(0, vocab_size - len(vocab))
    merges, merge_counts = learn_merges(words, wanted, min_frequency,
                                        Ticker(progress, should_stop),
                                        alphabet=[vocab[i].encode() for i in ids],
                                        skip_known=True)
    merges = [(left.decode(), right.decode()) for left, right in merges]
    first = max(vocab) + 1
    vocab.update((first + n, left + right) for n, (left, right) in enumerate(merges))
    parent_counts = parent.merge_counts or [None] * len(parent.merges)
    return CharExtensionResult(vocab, parent.symbol_merges + merges,
                               list(parent_counts) + merge_counts, parent.special_tokens,
                               parent.suffix, parent.lowercase, parent.pattern,
                               stop_reason(len(merges), wanted, min_frequency),
                               unk_token=parent.unk_token)


def new_symbols(parent: CharBPETokenizer, counts: dict[str, int], first: int) -> dict[int, str]:
    """The symbols of the words that the parent lacks, by UTF-8 bytes, with ids from ``first``:
    with a parent of ``a``, ``a</w>``, ``{"ab": 1}`` at 5 -> ``{5: "b</w>"}``."""
    known = set(parent.symbols.values())
    seen = {s for word in counts for s in word_symbols(word, parent.suffix)}
    return {first + n: s for n, s in enumerate(sorted(seen - known, key=str.encode))}
