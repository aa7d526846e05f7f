"""The one comparison of versions on an evaluation corpus (``services.comparisons``), which the
compare page, ``GET /api/compare`` and ``manage.py compare`` all show."""

import pytest

from tokenizers_app.bpe.metrics import METRICS
from tokenizers_app.errors import Invalid, NotFound
from tokenizers_app.models import Evaluation
from tokenizers_app.services.comparisons import compare_versions, evaluation_corpus

pytestmark = pytest.mark.django_db


def rows_by_name(comparison) -> dict:
    return {row.name: row for row in comparison.rows}


def test_each_metric_marks_the_best_value_by_its_direction(registry_data):
    small, large = registry_data["small"], registry_data["large"]
    comparison = compare_versions(versions=[small, large], corpus=registry_data["held_out"])
    assert [row.name for row in comparison.rows] == list(METRICS)
    stored = [Evaluation.objects.get(version=v).metrics for v in (small, large)]
    for name in ("compression_ratio", "tokens_per_word", "word_coverage"):
        values = [metrics[name] for metrics in stored]
        best = max(values) if METRICS[name][2] else min(values)
        row = rows_by_name(comparison)[name]
        assert row.values == values and row.best == [v == best for v in values], name
    assert rows_by_name(comparison)["compression_ratio"].best == [False, True]
    assert rows_by_name(comparison)["tokens_per_word"].best == [False, True]


def test_equal_values_are_all_best_and_metrics_no_version_reports_are_not_shown(registry_data):
    large = registry_data["large"]
    rows = rows_by_name(compare_versions(versions=[large, large],
                                         corpus=registry_data["held_out"]))
    assert rows["compression_ratio"].best == [True, True]
    # byte-level versions report a byte-fallback rate, never an unknown rate
    assert rows["byte_fallback_rate"].reported and not rows["unknown_rate"].reported


def test_a_version_without_a_result_has_no_value_and_nothing_is_best_among_one(registry_data):
    small, large = registry_data["small"], registry_data["large"]
    Evaluation.objects.filter(version=small).update(status=Evaluation.Status.FAILED)
    Evaluation.objects.filter(version=large).delete()
    comparison = compare_versions(versions=[small, large], corpus=registry_data["held_out"])
    assert comparison.evaluations[1] is None
    assert comparison.evaluations[0].status == Evaluation.Status.FAILED
    for row in comparison.rows:
        assert row.values == [None, None] and row.best == [False, False] and row.reported

    Evaluation.objects.filter(version=small).update(status=Evaluation.Status.SUCCEEDED)
    rows = rows_by_name(compare_versions(versions=[small, large],
                                         corpus=registry_data["held_out"]))
    assert rows["compression_ratio"].values[0] is not None
    assert rows["compression_ratio"].best == [False, False]  # one value: nothing to choose


def test_only_evaluation_corpora_are_compared(registry_data):
    assert evaluation_corpus("held-out") == registry_data["held_out"]
    with pytest.raises(Invalid, match="'prose' is not an evaluation corpus.*held-out") as refused:
        evaluation_corpus("prose")
    assert refused.value.field == "corpus"
    with pytest.raises(NotFound, match="no corpus named 'nothing'"):
        evaluation_corpus("nothing")


def test_an_undefined_value_is_no_value_and_a_timing_figure_is_never_best(registry_data):
    small, large = registry_data["small"], registry_data["large"]
    for evaluation in Evaluation.objects.filter(version__in=[small, large]):
        Evaluation.objects.filter(pk=evaluation.pk).update(
            metrics={**evaluation.metrics, "byte_fallback_rate": None})
    rows = rows_by_name(compare_versions(versions=[small, large],
                                         corpus=registry_data["held_out"]))
    fallback = rows["byte_fallback_rate"]
    assert fallback.reported and fallback.undefined == [True, True]
    assert fallback.values == [None, None] and fallback.best == [False, False]
    throughput = rows["encode_throughput_mb_s"]
    assert None not in throughput.values and throughput.best == [False, False]
    assert rows["compression_ratio"].undefined == [False, False]
