"""The ids of many distinct words of character-level BPE at once, merged in C, for an evaluation
(``totals.RunTotals``) that meets each distinct word once.

``CharBPETokenizer.bpe`` merges, at each step, every occurrence of the pair of lowest rank (left
to right, no overlaps); the compiled ``MergeTable.merge_ids_many`` merges one occurrence at a
time, the leftmost of the lowest rank. Both give the same ids when no pair holding a token has a
rank below one that makes that token (``consistent``: then the occurrences of the lowest pair
are merged one after the other before any other pair), which merges learned in order always
satisfy. ``compiled_word_ids(tokenizer)`` gives that compiled path, or None when it does not
apply: no compiled core, merges that are not consistent, no unknown token for a symbol outside
the vocab. The words merged are kept in the tokenizer's cache, as ``_encode_word`` keeps them.
Oracle: ``CharBPETokenizer.bpe`` (tests/bpe/test_char_merges.py).
"""

from __future__ import annotations

from collections.abc import Callable

from . import compiled
from .char_tokenizer import CACHE_SIZE
from .encoding_loop import missing_keys
from .pairs import pack


def consistent(ranks: dict[tuple[int, int], int], merged: list[int]) -> bool:
    """Whether every pair's rank is above every rank that makes one of its two tokens:
    ``consistent({(1, 2): 0, (3, 1): 1}, [3, 4]) -> True``; ``consistent({(1, 2): 1, (3, 1): 0},
    [4, 3]) -> False`` (token 3 is made at rank 1, after the pair (3, 1) of rank 0)."""
    made: dict[int, int] = {}
    for rank, token_id in enumerate(merged):
        made[token_id] = rank  # the last rank that makes it
    return all(rank > made.get(left, -1) and rank > made.get(right, -1)
               for (left, right), rank in ranks.items())


def compiled_word_ids(tokenizer) -> Callable[[list[str]], list[tuple[int, ...]]] | None:
    """A function from words to their ids (``_encode_word``'s), merged in C, or None."""
    if compiled.IS_COMPILED is False or tokenizer.unk_id is None or tokenizer.lowercase:
        return None
    if not consistent(tokenizer._ranks, tokenizer._merged):
        return None
    top = max(tokenizer.vocab)  # so that the table makes an int object for every id
    table = compiled.MergeTable({pack(left, right): rank
                                 for (left, right), rank in tokenizer._ranks.items()},
                                list(tokenizer._merged), [top] * 256)
    ids, unk, suffix = tokenizer._ids.get, tokenizer.unk_id, tokenizer.suffix
    if not 0 <= unk < 1 << 31:
        return None

    cache = tokenizer._cache  # shared with _encode_word, under its rule (missing_keys)

    def word_ids(words: list[str]) -> list[tuple[int, ...]]:
        fresh = list(missing_keys(cache, set(words), CACHE_SIZE))
        cache.update(zip(fresh, table.merge_ids_many(  # (None: a symbol not in the vocab)
            [[*map(ids, word[:-1]), ids(word[-1] + suffix)] for word in fresh], unk)))
        return list(map(cache.__getitem__, words))

    return word_ids
