"""Evolving a tokenizer in headless Chromium, against the live server and a real worker, at 1280
and 390 pixels wide: extend a version from its page (the run form opens prefilled), watch the
run end, open the diff from the new version's page, pin a golden, gate the production alias,
see a move refused, then forced with a reason. Every page is checked with axe-core and kept as
a screenshot."""

import re

import pytest

from unittest import mock

from tests.browser.test_journey import PASSWORD, accessible, sign_in
from tests.bpe.corpora import CHINESE, JAPANESE
from tests.registry.helpers import import_text, sample_text, train, wait_for_run
from tokenizers_app.models import AliasMove, Evaluation, TrainingRun

pytestmark = pytest.mark.slow


def registry_in_the_workers_media() -> None:
    """Two trained versions evaluated on held-out, built here (nothing sent to the worker), in
    the MEDIA_ROOT the worker reads; and a CJK corpus to extend on."""
    from tokenizers_app.services.evaluations import run_evaluation

    with mock.patch("celery.app.task.Task.apply_async"):
        corpus = import_text(sample_text(30_000), "prose")
        import_text(sample_text(8_000, offset=200_000), "held-out", is_evaluation=True)
        for size in (300, 600):
            train(corpus, "prose-bpe", vocab_size=size, special_tokens=["<|endoftext|>"])
        for evaluation in Evaluation.objects.all():
            run_evaluation(evaluation_id=evaluation.pk)
        import_text((CHINESE + "\n" + JAPANESE + "\n") * 40, "cjk")


@pytest.mark.parametrize("width", [1280, 390])
def test_staff_extend_a_version_diff_it_and_gate_production(visitor, worker,
                                                            django_user_model, width):
    registry_in_the_workers_media()  # prose-bpe@1 (300 tokens), @2 (600), held-out, cjk
    django_user_model.objects.create_user("boss", password=PASSWORD, is_staff=True)
    tab = visitor(width)
    sign_in(tab, "boss")

    page = tab.go("/tokenizers/prose-bpe/2/")
    page.click("text=Extend this version")
    page.wait_for_url(re.compile(r".*/runs/new/\?extends=prose-bpe%402$"))
    assert page.input_value("#id_extends") == "prose-bpe@2"
    assert page.input_value("#id_vocab_size") == "856"  # prefilled: 600 + 256
    page.select_option("#id_corpus", "cjk")
    page.fill("#id_vocab_size", "640")
    accessible(tab, "evolution-extend-form")
    page.click("main form button[type=submit]")
    page.wait_for_url(re.compile(r".*/runs/\d+/$"))
    run = TrainingRun.objects.get(extends__number=2)
    wait_for_run(run, timeout=120, worker=worker)
    assert run.status == "succeeded", run.error
    page.wait_for_selector("text=Finished in", timeout=30_000)
    assert "prose-bpe@2: its merges continued" in page.inner_text("#run-extends")
    accessible(tab, "evolution-run")

    page = tab.go("/tokenizers/prose-bpe/3/")
    assert "prose-bpe@2" in page.inner_text("#extends")
    page.click("text=What changed since prose-bpe@2")
    page.wait_for_selector("#verdict")
    assert page.inner_text("#verdict") == "extends"
    assert "the 40 new ids are 600–639" in page.inner_text("#verdict-text")
    page.select_option("#diff-corpus", "held-out")
    page.click("#diff-form button[type=submit]")
    page.wait_for_selector("#corpus-share")
    assert "100% (" in page.inner_text("#corpus-share")  # English: the CJK merges never touch it
    accessible(tab, "evolution-diff")

    page = tab.go("/tokenizers/prose-bpe/2/")
    page.fill("#alias-name", "production")
    page.click("form.inline button:has-text('Move the alias')")
    page.wait_for_selector("text=alias production now points at prose-bpe@2")
    page.fill("#golden-text", "The quick brown fox")
    page.click("text=Pin it")
    page.wait_for_selector("text=golden pinned from prose-bpe@2")
    assert "✓ keeps it" in page.inner_text("#goldens")
    page.fill("#gate-production", "1")
    page.click("text=Set the gate")
    page.wait_for_selector("text=is gated with a tolerance of 1%")
    accessible(tab, "evolution-gate")

    page = tab.go("/tokenizers/prose-bpe/1/")
    assert "✗ other ids" in page.inner_text("#goldens")
    page.fill("#alias-name", "production")
    page.click("form.inline button:has-text('Move the alias')")
    page.wait_for_selector("text=the gate of prose-bpe@production refuses prose-bpe@1")
    refusal = page.inner_text("main")
    assert "ids: prose-bpe@1 incompatible prose-bpe@2" in refusal
    assert "goldens: 1 golden broken" in refusal
    accessible(tab, "evolution-refused")
    page.fill("#alias-name", "production")
    page.fill("#force-reason", "roll back for the demo")
    page.click("form.inline button:has-text('Move the alias')")
    page.wait_for_selector("text=forced past the gate: roll back for the demo")
    accessible(tab, "evolution-forced")
    move = AliasMove.objects.filter(alias__name="production").first()
    assert move.forced_reason == "roll back for the demo" and move.to_version.number == 1
