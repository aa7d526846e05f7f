"""Issue 19's loop in Chromium with a real worker: a corpus made an evaluation corpus after two
versions exist ranks both on the leaderboard, with no new training; kept as screenshots at 1280
and 390 pixels wide and checked with axe-core."""

from unittest import mock

import pytest

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
    assert [rows.nth(i).locator("td").nth(1).inner_text() for i in range(2)] == [
        "prose-bpe@2", "prose-bpe@1"]  # the larger vocab packs more bytes into each token
    assert TrainingRun.objects.count() == runs and TokenizerVersion.objects.count() == 2
    assert set(Evaluation.objects.values_list("status", flat=True)) == {"succeeded"}
    accessible(tab, "loop-leaderboard")
    phone = visitor(390)
    phone.go("/")
    accessible(phone, "loop-leaderboard")
