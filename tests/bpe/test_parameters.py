"""Training parameters are checked once, in the core (``bpe.parameters``): each bad value raises
``Invalid``, a ``ValueError`` that names the API/form field it is about."""

import pytest

from tokenizers_app.bpe.parameters import (
    TrainingParameters,
    check_min_frequency,
    check_sweep,
    check_training_parameters,
    check_vocab_size,
)
from tokenizers_app.errors import Invalid


def test_good_parameters_come_back_checked_and_normalized():
    params = check_training_parameters(vocab_size=400, special_tokens=("<s>",),
                                       pattern="gpt4", min_frequency=2, sweep=[300, 280, 300])
    assert params == TrainingParameters(400, ["<s>"], "gpt4", 2, [280, 300])


def test_a_named_pattern_given_by_its_regex_comes_back_as_its_name():
    from tokenizers_app.bpe.pretokenize import GPT2_PATTERN
    assert check_training_parameters(vocab_size=300, pattern=GPT2_PATTERN).pattern == "gpt2"


@pytest.mark.parametrize("parameters, field, message", [
    ({"vocab_size": 255}, "vocab_size", r"vocab size 255 is out of bounds: .* from 256 \(256 "
                                        r"bytes \+ 0 special tokens\) or more"),
    ({"vocab_size": 256, "special_tokens": ["<s>"]}, "vocab_size", "from 257"),
    ({"vocab_size": "300"}, "vocab_size", "vocab size '300' is out of bounds"),
    ({"vocab_size": True}, "vocab_size", "vocab size True is out of bounds"),
    ({"vocab_size": 2_001, "max_vocab_size": 2_000}, "vocab_size",
     r"to 2000 \(MAX_VOCAB_SIZE\)"),
    ({"special_tokens": ["<s>", "<s>"]}, "special_tokens", "listed twice"),
    ({"special_tokens": [""]}, "special_tokens", "non-empty strings"),
    ({"special_tokens": ["a\x00"]}, "special_tokens", "NUL"),
    ({"pattern": "(unclosed"}, "pattern", "does not compile"),
    ({"pattern": ""}, "pattern", "'gpt2', 'gpt4', 'o200k', 'none' or a regex"),
    ({"min_frequency": 0}, "min_frequency", "min frequency must be an integer >= 1, got 0"),
    ({"min_frequency": 1.5}, "min_frequency", "got 1.5"),
    ({"min_frequency": 2**31}, "min_frequency", "at most 2147483647 .*, got 2147483648"),
    ({"sweep": [5000]}, "sweep", "sweep vocab size 5000 must be an integer from 256 to 499"),
])
def test_each_bad_value_names_its_field(parameters, field, message):
    with pytest.raises(Invalid, match=message) as raised:
        check_training_parameters(**{"vocab_size": 500, **parameters})
    assert raised.value.field == field
    assert isinstance(raised.value, ValueError)  # plain-Python callers catch ValueError


def test_the_registry_bound_is_optional_and_inclusive():
    assert check_vocab_size(10**9, 0) == 10**9
    assert check_vocab_size(2_000, 0, maximum=2_000) == 2_000
    assert check_min_frequency(3) == 3


@pytest.mark.parametrize("sizes, message", [
    ([257], "sweep vocab size 257 must be an integer from 258 to 399"),
    ([400], "from 258 to 399"), ([300.0], "300.0"), ([True], "True")])
def test_sweep_sizes_must_lie_between_the_bytes_and_the_vocab_size(sizes, message):
    with pytest.raises(Invalid, match=message) as raised:
        check_sweep(sizes, 400, 2)
    assert raised.value.field == "sweep"


def test_a_sweep_may_list_at_most_max_sweep_sizes_sizes():
    assert check_training_parameters(vocab_size=400, sweep=[300, 310], max_sweep_sizes=2).sweep \
        == [300, 310]
    with pytest.raises(Invalid, match="the sweep lists 3 vocab sizes; a run takes at most 2 "
                                      r"\(MAX_SWEEP_SIZES\)") as raised:
        check_training_parameters(algorithm="char_bpe", vocab_size=400, sweep=[30, 31, 32],
                                  max_sweep_sizes=2)
    assert raised.value.field == "sweep"


def test_the_vocab_size_bound_counts_one_special_token_in_the_singular():
    from tokenizers_app.bpe.parameters import check_vocab_size
    from tokenizers_app.errors import Invalid

    with pytest.raises(Invalid, match=r"from 257 \(256 bytes \+ 1 special token\) or more"):
        check_vocab_size(256, 1)
    with pytest.raises(Invalid, match=r"\+ 2 special tokens\)"):
        check_vocab_size(256, 2)


def test_checked_parameters_go_to_json_and_back_whole():
    params = check_training_parameters(algorithm="char_bpe", vocab_size=500, split="word_punct",
                                       lowercase=True, sweep=[400])
    assert TrainingParameters.from_json(params.as_json()) == params
    assert params.pattern == "" and params.split == "word_punct"
    assert check_training_parameters(vocab_size=300).public() == {
        "algorithm": "byte_bpe", "vocab_size": 300, "pattern": "gpt2", "special_tokens": [],
        "min_frequency": 1, "sweep": [], "lowercase": None, "split": None,
        "min_word_frequency": None}
