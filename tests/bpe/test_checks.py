from tokenizers_app.bpe.checks import is_int


def test_is_int_takes_ints_but_not_bools_floats_or_text():
    assert is_int(0) and is_int(-3) and is_int(10**30)
    assert not any(map(is_int, [True, False, 3.0, "3", None]))
