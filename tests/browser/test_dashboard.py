"""Issue 33 in Chromium at 1280 and 390 pixels: the top bar to Import and Tokenizers, three
versions picked for compare from the list (their words table's headings each inside their own
column), an API key created on ``/account/``, used with curl and revoked, and an unused corpus
deleted while a used one is refused with the reason. Screenshots kept, axe-core checked."""

import re
import shutil
import subprocess
from unittest import mock

import pytest

from tests.browser.test_journey import PASSWORD, accessible
from tests.registry.helpers import import_text, sample_text, train
from tokenizers_app.models import Corpus, Evaluation
from tokenizers_app.services.runs import cancel_training_run, start_training_run

pytestmark = pytest.mark.slow
# long names, as the demo's: a heading of the compare page's words table once ran into the next
LONG = ("demo-docs-bpe-with-a-long-name", "demo-docs-wordpiece-with-a-long-name",
        "demo-docs-char-bpe-with-a-long-name")


@pytest.fixture
def registry(transactional_db, django_user_model):
    """A member who uploaded ``prose`` (trained on: used) and three trained tokenizers, each
    evaluated on ``held-out``."""
    from tokenizers_app.services.evaluations import run_evaluation

    member = django_user_model.objects.create_user("member", password=PASSWORD)
    with mock.patch("celery.app.task.Task.apply_async"):
        corpus = import_text(sample_text(30_000), "prose", uploaded_by=member)
        import_text(sample_text(6_000, offset=100_000), "held-out", is_evaluation=True)
        for name, size, algorithm in zip(LONG, (400, 500, 450),
                                         ("byte_bpe", "byte_bpe", "char_bpe")):
            train(corpus, name, vocab_size=size, algorithm=algorithm)
        for evaluation in Evaluation.objects.all():
            run_evaluation(evaluation_id=evaluation.pk)
        cancelled = start_training_run(corpora=["held-out"], tokenizer_name="cancelled-bpe",
                                       vocab_size=300, created_by=member)
        cancel_training_run(run=cancelled, user=member)
    assert set(Evaluation.objects.values_list("status", flat=True)) == {"succeeded"}
    return member


def curl(*arguments) -> tuple[int, str]:
    """``(HTTP status, body)`` of a curl call."""
    done = subprocess.run(["curl", "-sS", "-w", "\n%{http_code}", *arguments],
                          capture_output=True, text=True, timeout=60, check=True)
    body, _, status = done.stdout.rpartition("\n")
    return int(status), body


def the_top_bar_leads_to_import_and_tokenizers(tab, width):
    page = tab.go("/")
    page.click("header.top nav >> text=Import")
    page.wait_for_url(f"{tab.base_url}/tokenizers/import/")
    assert page.inner_text("h1") == "Import a tokenizer"
    page.click("header.top nav >> text=Tokenizers")
    page.wait_for_url(f"{tab.base_url}/tokenizers/")
    assert all(name in page.inner_text("main") for name in LONG)
    page.fill("#site-search-q", "wordpiece@")
    page.press("#site-search-q", "Enter")
    page.wait_for_url(re.compile(r".*/search/\?q=wordpiece%40$"))
    assert page.locator("#found-versions li").all_inner_texts()[0].startswith(f"{LONG[1]}@1")
    accessible(tab, "dashboard-search")


def three_versions_are_picked_for_compare_from_the_list(tab, width):
    page = tab.go("/compare/")
    accessible(tab, "dashboard-compare-picker")
    for name in LONG:
        page.check(f'.picker-group[data-name="{name}"] input[type=checkbox]')
    refs = [f"{name}@1" for name in LONG]
    assert page.input_value("#versions") == ",".join(refs)  # the list writes the typed list
    page.fill("#versions", refs[0] + ",demo")
    page.dispatch_event("#versions", "input")
    offered = page.eval_on_selector_all("#versions-choices option", "os => os.map(o => o.value)")
    assert f"{refs[0]},{refs[1]}" in offered  # the completion keeps what was typed before
    page.fill("#versions", "")
    page.dispatch_event("#versions", "input")
    assert not page.is_checked(f'.picker-group[data-name="{LONG[0]}"] input')
    page.fill(".picker-filter input", "char")
    assert page.is_hidden(f'.picker-group[data-name="{LONG[0]}"]')
    page.fill(".picker-filter input", "")
    for name in LONG:
        page.check(f'.picker-group[data-name="{name}"] input[type=checkbox]')
    page.click("main form button[type=submit]")
    page.wait_for_url(re.compile(r".*/compare/\?versions=.*"))
    heads = page.locator("#metrics thead th").all_inner_texts()
    assert [h for h in heads if "@1" in h] and all(any(r in h for h in heads) for r in refs)
    assert page.locator("#split-words tbody tr").count() > 0
    spill = page.eval_on_selector_all(
        "#split-words thead th", "ths => ths.filter(th => th.scrollWidth > th.clientWidth + 1)"
                                 ".map(th => th.innerText)")
    assert spill == []  # every heading inside its own column
    accessible(tab, "dashboard-compare")


def a_key_is_created_used_with_curl_and_revoked(tab, width, tmp_path) -> str:
    page = tab.go("/account/")
    page.fill("#id_name", f"curl at {width}")
    page.click("main form button[type=submit]")
    key = page.inner_text("#new-key")
    assert key.startswith("trk_") and "not shown again" in page.inner_text(".new-key")
    accessible(tab, "dashboard-key-created")
    text = tmp_path / f"spare-{width}.txt"
    text.write_text(f"a mistaken upload at {width} pixels\n" * 20, encoding="utf-8")
    status, body = curl("-H", f"Authorization: Bearer {key}", "-F", f"name=spare-{width}",
                        "-F", f"file=@{text}", f"{tab.base_url}/api/corpora")
    assert status == 201, body
    assert Corpus.objects.get(name=f"spare-{width}").uploaded_by.username == "member"
    page = tab.go("/account/")
    row = page.locator("#api-keys tbody tr", has_text=f"curl at {width}")
    assert "never" not in row.inner_text()  # its use is shown
    row.locator("button", has_text="Revoke").click()
    page.wait_for_url(f"{tab.base_url}/account/")
    assert "is revoked" in page.inner_text(".messages")
    accessible(tab, "dashboard-key-revoked")
    status, body = curl("-H", f"Authorization: Bearer {key}", "-X", "POST",
                        f"{tab.base_url}/api/runs")
    assert status == 401, body
    return f"spare-{width}"


def an_unused_corpus_is_deleted_and_a_used_one_refused(tab, width, spare):
    page = tab.go(f"/corpora/{spare}/")
    page.click("text=Delete this corpus…")
    page.check("#confirm-delete")
    page.click("button.danger:has-text(\"Delete spare\")")
    page.wait_for_url(f"{tab.base_url}/corpora/")
    assert f"corpus {spare} is deleted" in page.inner_text(".messages")
    assert not Corpus.objects.filter(name=spare).exists()
    page = tab.go("/corpora/prose/")
    page.click("text=Delete this corpus…")
    assert "It cannot be deleted now" in page.inner_text("#delete-blocked")
    accessible(tab, "dashboard-delete-box")
    page.check("#confirm-delete")
    page.click("button.danger:has-text(\"Delete prose\")")
    page.wait_for_load_state()
    assert page.inner_text("h1") == "Not possible now"
    assert "3 runs trained on it" in page.inner_text(".error-box")
    accessible(tab, "dashboard-delete-refused")
    page.click("#way-back")
    page.wait_for_url(f"{tab.base_url}/corpora/prose/")
    assert Corpus.objects.filter(name="prose").exists()


def a_tokenizer_whose_only_run_was_cancelled_links_the_run(tab, width):
    page = tab.go("/tokenizers/cancelled-bpe/")
    assert "was cancelled (why below)" in page.inner_text("#no-version")
    assert "before it saved a version" in page.inner_text("#runs-without-version")
    accessible(tab, "dashboard-cancelled-tokenizer")
    page.click("#no-version a")
    page.wait_for_url(re.compile(r".*/runs/\d+/$"))
    assert "Cancelled" in page.inner_text("#run-progress")


@pytest.mark.parametrize("width", (1280, 390))
def test_a_member_finds_compares_keeps_keys_and_tidies_up(visitor, registry, width, tmp_path):
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed (apt-get install curl)")
    tab = visitor(width)
    tab.sign_in("member", PASSWORD)
    the_top_bar_leads_to_import_and_tokenizers(tab, width)
    three_versions_are_picked_for_compare_from_the_list(tab, width)
    spare = a_key_is_created_used_with_curl_and_revoked(tab, width, tmp_path)
    an_unused_corpus_is_deleted_and_a_used_one_refused(tab, width, spare)
    a_tokenizer_whose_only_run_was_cancelled_links_the_run(tab, width)
    assert tab.page.evaluate("document.documentElement.scrollWidth") <= width
