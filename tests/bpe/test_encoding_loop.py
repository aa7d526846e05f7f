"""The encoder's inner loop (``encoding_loop.MergeTable``, and the compiled twin the tokenizer runs
when it was built) against ``reference.reference_bpe``."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.bpe.corpora import SAMPLES
from tests.bpe.reference import reference_bpe
from tests.fixtures import gpt2_fixture_dir
from tokenizers_app.bpe import Tokenizer, load_tokenizer, train_bpe
from tokenizers_app.bpe.encoding_loop import NO_RANK, MergeTable, missing_keys
from tokenizers_app.bpe.pairs import pack


@pytest.fixture(scope="module")
def trained():
    return train_bpe(list(SAMPLES.values()), 256 + 500)


def _sparse(trained) -> Tokenizer:
    """The trained tokenizer with every id moved far apart and the bytes' ids above 255, so that
    the merge table keeps its ranks in a dict and cannot translate bytes to ids in C."""
    return Tokenizer({SPARSE * i + 7: token for i, token in trained.vocab.items()},
                     trained.merges)


SPARSE = 1000


@pytest.fixture(scope="module", params=["trained", "gpt2", "sparse"])
def tokenizer(request, trained):
    if request.param == "gpt2":
        return load_tokenizer(gpt2_fixture_dir())
    if request.param == "sparse":
        tokenizer = _sparse(trained)
        assert isinstance(pure_table(tokenizer).after, dict)
        assert pure_table(tokenizer).translation is None
        return tokenizer
    tokenizer = trained.tokenizer()
    assert isinstance(pure_table(tokenizer).after, list)
    assert pure_table(tokenizer).translation is not None
    return tokenizer


def pure_table(tokenizer) -> MergeTable:
    """The pure-Python merge table of a tokenizer (which may run the compiled one)."""
    return MergeTable(tokenizer._table.ranks, tokenizer._table.merged, tokenizer._table.byte_ids)


@pytest.fixture(scope="module")
def table(tokenizer):
    return pure_table(tokenizer)


@settings(max_examples=300, deadline=None)
@given(word=st.text(max_size=80).map(str.encode))
def test_bpe_many_equals_the_plain_definition(tokenizer, table, word):
    for merge_table in (table, tokenizer._table):  # the pure one, and the one encode runs
        [ids] = merge_table.bpe_many([word])
        assert [tokenizer.vocab[i] for i in ids] == reference_bpe(tokenizer.merges, word)


def test_sparse_ids_give_the_same_tokens(trained):
    text = "".join(SAMPLES.values())
    dense = trained.tokenizer().encode_ordinary(text)
    assert _sparse(trained).encode_ordinary(text) == [SPARSE * i + 7 for i in dense]


@settings(max_examples=200, deadline=None)
@given(word=st.text(min_size=2, max_size=200).map(str.encode))
def test_the_heap_for_long_pretokens_equals_the_short_loop(table, word):
    ids = list(map(table.byte_ids.__getitem__, word))
    rank_of = [table.ranks.get(pack(a, b), NO_RANK) for a, b in zip(ids, ids[1:])]
    assert table.bpe_long(ids, rank_of) == _short_loop(table, word)


def _short_loop(table, word: bytes) -> list[int]:
    """``reference.reference_bpe`` in the table's ids, for comparing with ``bpe_long``."""
    ids = [table.byte_ids[b] for b in word]
    while True:
        ranked = [(table.ranks.get(pack(a, b)), i) for i, (a, b) in enumerate(zip(ids, ids[1:]))]
        ranked = [item for item in ranked if item[0] is not None]
        if not ranked:
            return ids
        rank, i = min(ranked)
        ids[i:i + 2] = [table.merged[rank]]


def test_the_cache_rule_empties_a_cache_that_the_missing_keys_would_overflow():
    cache = {"a": (1,), "b": (2,)}
    assert missing_keys(cache, {"a", "c"}, size=3) == {"c"} and len(cache) == 2
    assert missing_keys(cache, {"a", "c", "d"}, size=3) == {"a", "c", "d"} and cache == {}
