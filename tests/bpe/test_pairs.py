"""The packed-pair layout shared by the merge loops (``bpe.pairs``)."""

from hypothesis import given
from hypothesis import strategies as st

from tokenizers_app.bpe.pairs import LOW, SHIFT, pack, unpack

IDS = st.integers(min_value=0, max_value=(1 << 32) - 1)


@given(left=IDS, right=IDS)
def test_a_packed_pair_unpacks_to_its_ids_and_orders_by_left_then_right(left, right):
    assert unpack(pack(left, right)) == (left, right)
    assert pack(left, right) >> SHIFT == left and pack(left, right) & LOW == right
    if right < LOW:
        assert pack(left, right) < pack(left, right + 1)
    if left < LOW:
        assert pack(left, LOW) < pack(left + 1, 0)


def test_the_worked_example():
    assert pack(3, 7) == 12884901895 and unpack(12884901895) == (3, 7)
