import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.bpe.corpora import SAMPLES
from tests.fixtures import gpt2_fixture_dir
from tokenizers_app.bpe import Tokenizer, load_tokenizer, train_bpe


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
def table(request, trained):
    if request.param == "gpt2":
        return load_tokenizer(gpt2_fixture_dir())._table
    if request.param == "sparse":
        table = _sparse(trained)._table
        assert isinstance(table.after, dict) and table.translation is None
        return table
    table = trained.tokenizer()._table
    assert isinstance(table.after, list) and table.translation is not None
    return table


@settings(max_examples=300, deadline=None)
@given(word=st.text(max_size=80).map(str.encode))
def test_bpe_many_equals_the_plain_definition(table, word):
    assert table.bpe_many([word]) == [tuple(_short_loop(table, word))]


def test_sparse_ids_give_the_same_tokens(trained):
    text = "".join(SAMPLES.values())
    dense = trained.tokenizer().encode_ordinary(text)
    assert _sparse(trained).encode_ordinary(text) == [SPARSE * i + 7 for i in dense]


@settings(max_examples=200, deadline=None)
@given(word=st.text(min_size=2, max_size=200).map(str.encode))
def test_the_heap_for_long_pieces_equals_the_short_loop(table, word):
    ids = list(map(table.byte_ids.__getitem__, word))
    assert table.bpe_long(ids, table.byte_pair_ranks(word)) == _short_loop(table, word)


def _short_loop(table, word: bytes) -> list[int]:
    """The plain definition: merge the lowest-rank pair, leftmost first, until none is left."""
    ids = [table.byte_ids[b] for b in word]
    while True:
        ranked = [(table.ranks.get(a << 32 | b), i) for i, (a, b) in enumerate(zip(ids, ids[1:]))]
        ranked = [item for item in ranked if item[0] is not None]
        if not ranked:
            return ids
        rank, i = min(ranked)
        ids[i:i + 2] = [table.merged[rank]]
