"""Issue 32 in Chromium at 1280 and 390 pixels: a member uploads a zip of Django's own ``.po``
files as a parallel set, every version is evaluated on each language, the heat map and the
premium table are read, two versions are compared on the set, and one line is opened in every
language in the playground. Screenshots kept, axe-core checked."""

from unittest import mock

import pytest

from tests.browser.test_journey import PASSWORD, accessible
from tests.languages.test_parallel_sets import django_po_zip
from tests.registry.helpers import import_text, sample_text, train
from tokenizers_app.models import Evaluation, ParallelSet
from tokenizers_app.services.evaluations import run_evaluation
from tokenizers_app.services.parity import parity

pytestmark = pytest.mark.slow
LANGUAGES = ["de", "fr", "ja", "ru", "ar", "zh_Hans", "hi", "ko"]


@pytest.fixture
def registry(transactional_db, django_user_model, settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    member = django_user_model.objects.create_user("member", password=PASSWORD)
    with mock.patch("celery.app.task.Task.apply_async"):
        corpus = import_text(sample_text(30_000), "prose", uploaded_by=member)
        train(corpus, "prose-bpe", vocab_size=300)
        train(corpus, "prose-bpe", vocab_size=600)
    return member


def work_as_a_worker():
    for evaluation in Evaluation.objects.filter(status=Evaluation.Status.QUEUED):
        run_evaluation(evaluation_id=evaluation.pk)


@pytest.mark.parametrize("width", (1280, 390))
def test_a_member_uploads_a_parallel_set_and_reads_the_premium(visitor, registry, width,
                                                              tmp_path):
    archive = tmp_path / "django-po.zip"
    archive.write_bytes(django_po_zip(LANGUAGES))
    tab = visitor(width)
    tab.sign_in("member", PASSWORD)
    with mock.patch("celery.app.task.Task.apply_async"):  # the test is the worker
        page = tab.go("/")
        page.click("header.top nav >> text=Corpora")
        page.click("main >> text=Languages: parallel sets")
        page.wait_for_url(f"{tab.base_url}/parallel/")
        page.click("text=Upload a parallel set")
        page.wait_for_url(f"{tab.base_url}/parallel/upload/")  # (axe injected mid-navigation
        accessible(tab, "parallel-upload")  # finds no document head)
        page.fill("#id_name", "django")
        page.set_input_files("#id_file", str(archive))
        page.click("main form button[type=submit]")
        page.wait_for_url(f"{tab.base_url}/parallel/django/")
        created = ParallelSet.objects.get()
        said = page.inner_text(".messages, [role=status], main")
        assert f"{created.line_count} aligned lines in 9 languages" in said
        assert f"{created.skipped['plural forms']} plural forms" in said
        work_as_a_worker()
    page = tab.go("/parallel/django/")
    expected = parity(parallel_set=created)
    cells = page.locator("#heat-map-table tbody td")
    assert cells.count() == 9 * 2
    assert all(text.endswith("×") for text in cells.all_inner_texts())  # every pair evaluated
    accessible(tab, "parallel-set")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    heat = page.locator("#heat-map-table")
    box = heat.bounding_box()
    assert box["width"] <= width  # the whole heat map is in view, no sideways scroll
    heat.screenshot(path=str(tab.shot("parallel-set").with_name(f"heat-map-{width}.png")))
    worst = expected.versions[0]
    spread = page.inner_text("#spread-table")
    assert f"{worst.worst_premium:.2f}×" in spread and worst.worst_language in spread
    # the premium table of the second version, from the picker
    page.select_option("#id_version", "prose-bpe@2")
    page.click("#languages + form button, form:has(#id_version) button")
    page.wait_for_url("**version=prose-bpe%402**")
    table = page.inner_text("#premium-table")
    for language, score in expected.versions[1].scores.items():
        assert f"{score.premium:.2f}×" in table and str(score.tokens) in table
    # sorted by a version's premium: the worst language comes right after the pivot
    page.click("#heat-map-table thead >> text=prose-bpe@1")
    first = page.locator("#heat-map-table tbody th").all_inner_texts()[:2]
    assert first[0].startswith("en") and first[1] == worst.worst_language
    # compare two versions on the set
    differences = page.inner_text("#differences-table")
    assert "✓" in differences
    tab.shot("parallel-set-sorted")
    # ... and on the compare page, which takes the set
    page.click("text=Compare these versions")
    page.wait_for_url("**/compare/?versions=**set=django**")
    compared = page.inner_text("#set-premiums-table")
    for row in expected.versions:
        assert f"{row.scores['ja'].premium:.2f}×" in compared
    assert "★" in compared
    accessible(tab, "parallel-compare")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.go_back()
    # one line in every language in the playground
    page.fill("#id_line", "5")
    page.click("#line-form button")
    page.wait_for_url("**/playground/?set=django**")
    assert page.locator("section.parallel-line").count() == 9
    assert page.locator("section.parallel-line .token-strip").count() == 9 * 2
    assert "premium on this line" in page.inner_text("#line-ja")
    accessible(tab, "parallel-line")
    assert page.evaluate("document.documentElement.scrollWidth") <= width


def test_the_demo_sets_heat_map_of_every_language_reads_at_390_px(visitor, registry):
    """Django's own translations (the demo's set, about 90 languages): the heat map scrolls in
    its own box, its version names stay in view, and the page itself never scrolls sideways."""
    from tokenizers_app.services.parallel import django_translations_set

    with mock.patch("celery.app.task.Task.apply_async"):
        created = django_translations_set()
        work_as_a_worker()
    languages = len(created.languages())
    assert languages > 80
    tab = visitor(390)
    page = tab.go(f"/parallel/{created.name}/")
    cells = page.locator("#heat-map-table tbody td")
    assert cells.count() == languages * 2
    assert all(text.endswith("×") for text in cells.all_inner_texts())
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    box = page.locator(".heat-scroll")
    box.evaluate("element => element.scrollTop = element.scrollHeight")
    header = page.locator("#heat-map-table thead th").nth(1).bounding_box()
    frame = box.bounding_box()
    assert frame["y"] <= header["y"] < frame["y"] + 5  # the versions' names stay at its top
    box.screenshot(path=str(tab.shot("demo-set").with_name("demo-heat-map-bottom-390.png")))
    accessible(tab, "demo-set")
