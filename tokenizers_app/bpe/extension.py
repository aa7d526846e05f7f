"""Extension: continue a parent's merges on a new corpus, so every parent id keeps its token.

A model trained on the parent holds one embedding row per id; the child only adds rows. The
child of a byte-level BPE parent:

- keeps the parent's vocab (every id, token and role), merges, pattern and special tokens;
- learns its new merges with the training loop (same counts, same tie-break) over the new
  corpus's pre-tokens as the parent segments them (the parent's merges applied first);
- gives new token ``i`` the id ``max(parent ids) + 1 + i``.

A pair whose merged token is already a token (the parent's merges can leave ``(b"a", b"bc")``
apart when they make ``b"abc"`` as ``(b"ab", b"c")``) is never learned: its occurrences stay
apart, exactly as the parent encodes them, and the vocab never holds one token twice (which no
download format could express).

Its plain twin: ``reference_extend`` in tests/bpe/reference.py.
"""

from __future__ import annotations

from .compiled import MergeTable, learn_merges
from .pairs import LOW, SHIFT, pack
from .parameters import TrainingParameters
from .pretokenize import PreTokenizer
from .tokenizer import Tokenizer
from .training import Ticker, TrainResult, check_pretoken_sizes, count_pretokens, stop_reason
from .words import FlatWords


def check_extension_size(parent_size: int, vocab_size: int) -> int:
    """The number of new tokens asked: ``vocab_size`` is the child's new total.
    ``check_extension_size(300, 310) -> 10``."""
    if vocab_size <= parent_size:
        raise ValueError(f"vocab_size {vocab_size:,} must be above the parent's {parent_size:,} "
                         f"tokens: an extension only adds tokens")
    return vocab_size - parent_size


def extend_bpe(parent: Tokenizer, source, params: TrainingParameters, *, progress=None,
               should_stop=None, workers: int | None = None) -> TrainResult:
    """Extend a byte-level BPE tokenizer on a source (see ``corpus.iter_documents``) to
    ``params.vocab_size`` tokens in all, merging pairs seen ``params.min_frequency`` times or
    more (``params``: the run's checked ``TrainingParameters``, whole; the parent's pattern and
    special tokens are the ones used)."""
    check_extension_size(len(parent.vocab), params.vocab_size)
    ticker = Ticker(progress, should_stop)
    word_counts = count_pretokens(source, PreTokenizer(parent.pattern), parent.special_tokens,
                                  ticker, workers)
    return extend_from_counts(parent, word_counts, params, progress=progress,
                              should_stop=should_stop)


def extend_from_counts(parent: Tokenizer, word_counts: dict[bytes, int],
                       params: TrainingParameters, *, progress=None,
                       should_stop=None) -> TrainResult:
    """The end of an extension, from counted pre-tokens (UTF-8 bytes -> count)."""
    vocab_size, min_frequency = params.vocab_size, params.min_frequency
    wanted = check_extension_size(len(parent.vocab), vocab_size)
    check_pretoken_sizes(word_counts, parent.pattern)
    alphabet, index_of = parent_alphabet(parent)
    words = parent_segmentation(parent, word_counts, index_of)
    merges, counts = learn_merges(words, wanted, min_frequency, Ticker(progress, should_stop),
                                  alphabet=alphabet, skip_known=True)
    return TrainResult(child_vocab(parent.vocab, merges), parent.merges + merges,
                       _parent_counts(parent) + counts, parent.special_tokens, parent.pattern,
                       stop_reason=stop_reason(len(merges), wanted, min_frequency))


def parent_alphabet(parent: Tokenizer) -> tuple[list[bytes], dict[int, int]]:
    """The parent's non-special tokens in id order (the loop's initial symbols), and id ->
    index into them. ``parent_alphabet`` of vocab ``{0: b"<s>", 1: b"a", 5: b"b"}`` with
    special ``<s>`` -> ``([b"a", b"b"], {1: 0, 5: 1})``."""
    specials = set(parent.special_ids.values())
    ids = sorted(i for i in parent.vocab if i not in specials)
    return [parent.vocab[i] for i in ids], {token_id: n for n, token_id in enumerate(ids)}


def parent_segmentation(parent: Tokenizer, word_counts: dict[bytes, int],
                        index_of: dict[int, int]) -> FlatWords:
    """Each pre-token as the parent encodes it (indices into ``parent_alphabet``), with its
    count, laid end to end for the merge loop (``FlatWords``). The parent's merges run on its
    merge table renumbered by ``index_of`` (``index_table``), so that ``bpe_flat`` gives the
    indices the loop takes, with no step per token, nor a tuple per pre-token, in Python. Two
    pre-tokens never share a segmentation (its tokens spell the pre-token), so no counts add up;
    a pre-token that is one token already is kept, and holds no pair."""
    symbols, lengths = index_table(parent._table, index_of).bpe_flat(word_counts)
    return FlatWords(symbols, lengths, list(word_counts.values()))


def index_table(table: MergeTable, index_of: dict[int, int]) -> MergeTable:
    """``table`` with each id replaced by ``index_of[id]``: the same merges in the same ranks,
    over other numbers. ``index_table`` of ``MergeTable({pack(5, 7): 0}, [9], byte_ids)`` with
    ``index_of = {5: 0, 7: 1, 9: 2, ...}`` has ranks ``{pack(0, 1): 0}`` and merged ``[2]``."""
    index = index_of.__getitem__
    ranks = {pack(index(pair >> SHIFT), index(pair & LOW)): rank
             for pair, rank in table.ranks.items()}
    return MergeTable(ranks, list(map(index, table.merged)), list(map(index, table.byte_ids)))


def child_vocab(vocab: dict[int, bytes], merges: list[tuple[bytes, bytes]]) -> dict[int, bytes]:
    """The parent's vocab, then one id per new merge after its largest id.
    ``child_vocab({0: b"a", 1: b"b"}, [(b"a", b"b")]) -> {0: b"a", 1: b"b", 2: b"ab"}``"""
    first = max(vocab) + 1
    child = dict(vocab)
    child.update((first + n, left + right) for n, (left, right) in enumerate(merges))
    return child


def _parent_counts(parent: Tokenizer) -> list[int | None]:
    """The parent's merge counts, or None for each merge of an imported parent (no counts)."""
    if parent.merge_counts is not None:
        return list(parent.merge_counts)
    return [None] * len(parent.merges)
