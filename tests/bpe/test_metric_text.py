"""A metric's value as text with its unit (``bpe.metric_text``), as pages, admin and commands
show it."""

from tokenizers_app.bpe.metric_text import metric_label, metric_number, metric_text, metric_unit


def test_numbers_keep_three_decimals_below_ten_and_one_above():
    assert metric_number(3.42, "compression_ratio") == "3.420"
    assert metric_number(1234.56, "encode_throughput_mb_s") == "1,234.6"
    assert metric_text(3.42, "compression_ratio") == "3.420 bytes/token"


def test_shares_are_percentages_that_keep_their_sign():
    assert metric_number(0.971, "word_coverage") == "97.1\u00a0%"  # one line in a table cell
    assert metric_text(0.971, "word_coverage") == "97.1 %"  # plain text for a terminal


def test_no_value_is_a_dash_without_a_unit():
    assert metric_number(None, "compression_ratio") == "—"
    assert metric_text(None, "compression_ratio") == "—"
    assert metric_text(0.5, "renyi_efficiency") == "0.500"  # a metric without a unit


def test_labels_and_units_come_from_the_core_and_unknown_names_are_themselves():
    assert metric_label("word_coverage") == "Word coverage"
    assert metric_unit("tokens_per_word") == "tokens/word"
    assert (metric_label("bytes"), metric_unit("bytes")) == ("bytes", "")


def test_an_undefined_value_reads_n_a_and_an_unreported_one_a_dash():
    from tokenizers_app.bpe.metric_text import reported_text

    assert reported_text({"byte_fallback_rate": None}, "byte_fallback_rate") == "n/a"
    assert reported_text({}, "unknown_rate") == "—"
    assert reported_text({"byte_fallback_rate": 0.25}, "byte_fallback_rate") == "25.0 %"


def test_a_share_is_shown_in_percent_on_charts_as_in_tables():
    from tokenizers_app.bpe.metric_text import metric_shown

    assert metric_shown(0.8, "word_coverage") == 80.0
    assert metric_shown(3.42, "compression_ratio") == 3.42
    assert metric_shown(None, "word_coverage") is None


def test_a_share_can_be_written_without_its_sign_under_a_heading_that_has_it():
    from tokenizers_app.bpe.metric_text import metric_number

    assert metric_number(0.971, "word_coverage", percent_sign=False) == "97.1"
    assert metric_number(0.971, "word_coverage") == "97.1\u00a0%"
    assert metric_number(3.42, "compression_ratio", percent_sign=False) == "3.420"


def test_an_undefined_value_reads_n_a_under_a_heading_with_the_unit_too():
    from tokenizers_app.bpe.metric_text import reported_text

    assert reported_text({"byte_fallback_rate": None}, "byte_fallback_rate",
                         number_only=True) == "n/a"
    assert reported_text({"word_coverage": 0.971}, "word_coverage", number_only=True) == "97.1"
