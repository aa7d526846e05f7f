import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.bpe.corpora import SAMPLES
from tests.fixtures import gpt2_fixture_dir
from tokenizers_app.bpe import load_tokenizer, train_bpe


@pytest.fixture(scope="module", params=["trained", "gpt2"])
def table(request):
    if request.param == "gpt2":
        return load_tokenizer(gpt2_fixture_dir())._table
    return train_bpe(list(SAMPLES.values()), 256 + 500).tokenizer()._table


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
