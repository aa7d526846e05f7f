"""Issue 19's loop in Chromium with a real worker: a corpus made an evaluation corpus after two
versions exist ranks both on the leaderboard, with no new training; kept as screenshots at 1280
and 390 pixels wide and checked with axe-core."""

from unittest import mock

import pytest

from tests.browser.conftest import SHOTS
from tests.browser.test_journey import PASSWORD, accessible, sign_in
from tests.registry.helpers import import_text, sample_text, train
from tokenizers_app.models import Evaluation, TokenizerVersion, TrainingRun

pytestmark = pytest.mark.slow


@pytest.fixture
def two_versions(transactional_db, django_user_model):
    """Two trained versions of ``prose-bpe`` and a corpus ``fresh`` that nothing was evaluated
    on, uploaded by ``ada``; built here (no task is sent: the worker only evaluates)."""
    ada = django_user_model.objects.create_user("ada", password=PASSWORD)
    with mock.patch("celery.app.task.Task.apply_async"):
        corpus = import_text(sample_text(30_000), "prose", uploaded_by=ada)
        fresh = import_text(sample_text(8_000, offset=200_000), "fresh", uploaded_by=ada)
        for vocab_size in (300, 600):
            train(corpus, "prose-bpe", vocab_size=vocab_size)
    assert not Evaluation.objects.exists()
    return fresh


def test_an_evaluation_corpus_ranks_the_versions_that_exist_without_new_training(
        visitor, worker, two_versions):
    runs = TrainingRun.objects.count()
    tab = visitor(1280)
    sign_in(tab, "ada")
    page = tab.go("/corpora/fresh/")
    page.click("text=Evaluate every version on it")
    page.wait_for_selector("text=every ready version is being evaluated on it")
    page = tab.go("/")
    board = page.locator("section", has=page.locator("h2", has_text="On fresh"))
    assert board.locator("tbody tr").count() == 2  # ranked, or computing until the worker ends
    for _ in range(120):
        if "computing…" not in board.inner_text():
            break
        page.wait_for_timeout(500)
        page.reload()
    rows = board.locator("tbody tr")
    assert rows.count() == 2 and "computing…" not in board.inner_text()
    assert [rows.nth(i).locator("td").nth(1).locator("a").inner_text() for i in range(2)] == [
        "prose-bpe@2", "prose-bpe@1"]  # the larger vocab packs more bytes into each token
    assert TrainingRun.objects.count() == runs and TokenizerVersion.objects.count() == 2
    assert set(Evaluation.objects.values_list("status", flat=True)) == {"succeeded"}
    accessible(tab, "loop-leaderboard")
    page = tab.go("/tokenizers/")
    accessible(tab, "loop-tokenizers")
    phone = visitor(390)
    page = phone.go("/")
    accessible(phone, "loop-leaderboard")
    page.click("th a:text('Word coverage')")
    page.fill("#id_min_vocab", "400")
    page.click("form.vocab-range button")
    page.wait_for_url("**/?sort=word_coverage&min_vocab=400&max_vocab=")
    assert page.locator("th[aria-sort] .sort-cue").inner_text() == "▼"
    assert "Ranked by Word coverage, highest first, vocab size 400 to any" in page.inner_text(
        ".sort-note")
    assert page.locator("tbody tr").count() == 1
    wide = page.evaluate("[...document.querySelectorAll('body *')].filter(e => "
                         "e.getBoundingClientRect().right > 392 && !e.closest('.table-scroll'))"
                         ".map(e => e.tagName + '.' + e.className + ' ' + "
                         "Math.round(e.getBoundingClientRect().right))")
    assert wide == [] and page.evaluate("document.documentElement.scrollWidth") <= 390, wide
    accessible(phone, "loop-leaderboard-sorted")


LICENSE_TEXT = ("Copyright notice (as found in LICENSE in the original source).\n"
                "--------------------------------------------------------------\n"
                "Licensed under the Apache License, Version 2.0; see "
                "<https://www.apache.org/licenses/LICENSE-2.0> for the terms.\n"
                "THE SOFTWARE IS PROVIDED AS IS, WITHOUT WARRANTY OF MERCHANTABILITY, "
                "FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT.\n") * 40


@pytest.fixture
def license_versions(transactional_db):
    """Two versions of ``copyright-bpe`` evaluated on ``licenses``, whose frequent words include
    a URL and a line of 62 dashes (as the demo's copyright files do)."""
    from tokenizers_app.services.evaluations import run_evaluation

    with mock.patch("celery.app.task.Task.apply_async"):
        corpus = import_text(LICENSE_TEXT + sample_text(20_000), "copyright-files")
        import_text(LICENSE_TEXT, "licenses", is_evaluation=True)
        for vocab_size in (300, 700):
            train(corpus, "copyright-bpe", vocab_size=vocab_size)
        for evaluation in Evaluation.objects.all():
            run_evaluation(evaluation_id=evaluation.pk)
    assert set(Evaluation.objects.values_list("status", flat=True)) == {"succeeded"}


def test_compare_with_two_versions_fits_a_phone_and_its_chart_reads_in_percent(
        visitor, license_versions):
    address = "/compare/?versions=copyright-bpe@1,copyright-bpe@2&corpus=licenses"
    for width in (1280, 390):
        tab = visitor(width)
        page = tab.go(address)
        assert page.locator("h2:text('Words they split differently') + p + div tbody tr"
                            ).count() > 0
        tables = page.locator(".table-scroll")
        widths = tables.evaluate_all(
            "ts => ts.map(t => [t.scrollWidth, t.clientWidth])")
        assert all(scroll <= client for scroll, client in widths), (width, widths)
        page.wait_for_selector("#chart-word_coverage")
        ticks = page.evaluate("Chart.getChart('chart-word_coverage').scales.y.ticks"
                              ".map(t => t.value)")
        assert max(ticks) == 100 and min(ticks) == 0, ticks
        accessible(tab, "loop-compare")
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.locator("#split-words").screenshot(path=str(SHOTS / f"loop-words-{width}.png"))
        page.locator("#metrics a.metric-help").first.click()  # a metric's definition
        page.wait_for_url("**/metrics/#compression_ratio")
        assert "UTF-8 bytes of the corpus per token." in page.inner_text("#compression_ratio + dd")
        accessible(tab, "loop-metrics")
        assert page.evaluate("document.documentElement.scrollWidth") <= width
