"""Issue 19, in Chromium: the playground (tokens never break across lines, ids on request,
details on a tap, cut characters and differences marked, a loading state), the run page and the
version page, at 1280 and 390 pixels wide, with axe-core and screenshots."""

import pytest

from tests.browser.test_journey import accessible

pytestmark = pytest.mark.slow

TEXT = ("def override(self):\n    return self.value  # keeps its word whole\n"
        "字节 and 🙂 are cut into several byte tokens; " * 3)


@pytest.fixture
def data(transactional_db, settings, tmp_path):
    from tests.registry.helpers import build_registry_data

    return build_registry_data(settings, tmp_path)


def encode(tab, versions: str, text: str):
    page = tab.go("/playground/")
    page.fill("#pg-versions", versions)
    page.fill("#text", text)
    page.click("main form button[type=submit]")
    page.wait_for_selector(".token-strip > span")
    return page


@pytest.mark.parametrize("width", [1280, 390])
def test_playground_tokens_never_break_and_tell_their_ids_on_a_tap(visitor, live_server, data,
                                                                    width):
    tab = visitor(width)
    page = encode(tab, "prose-bpe@1,prose-bpe@2", TEXT)
    strips = page.locator(".token-strip")
    assert strips.count() == 2
    # an inline box cut across two lines has two client rects; a whole token has one
    assert page.evaluate("""() => [...document.querySelectorAll('.token-strip > span')]
        .filter(s => s.getClientRects().length !== 1).length""") == 0
    assert strips.evaluate_all("ss => ss.every(s => s.scrollWidth <= s.clientWidth)")
    assert page.locator(".token-strip > span.s").count() > 0  # the cut characters, marked
    assert page.locator(".token-strip > span.d").count() > 0  # the versions differ
    assert "cut into several tokens" in page.inner_text("#results")
    page.locator(".token-strip > span.s").first.click()  # a tap: no hover on a phone
    detail = page.inner_text("#token-detail")
    assert "one character cut into" in detail and "ids " in detail
    page.check("#show-ids")
    first = page.locator(".token-strip > span").first
    ids = first.get_attribute("data-i")
    assert first.evaluate("s => getComputedStyle(s, '::before').content") == f'"{ids}"'
    accessible(tab, "playground-marks")


def test_playground_dims_the_old_result_while_it_encodes(visitor, live_server, data):
    tab = visitor(1280)
    page = encode(tab, "prose-bpe@1", "Hello world")
    held = []
    page.route("**/playground/", lambda route: held.append(route))
    page.fill("#text", "Hello again, world")
    page.click("main form button[type=submit]")
    page.wait_for_selector("#playground-out .loading", state="visible")
    page.wait_for_function("getComputedStyle(document.getElementById('results')).opacity < 1")
    tab.shot("playground-loading")
    for _ in range(100):  # the route's handler runs while Playwright waits: it may come late
        if held:
            break
        page.wait_for_timeout(50)
    assert len(held) == 1, "the playground's request never reached the route"
    held[0].continue_()
    page.wait_for_selector("#playground-out .loading", state="hidden")
    assert "again" in page.inner_text("#results")


def sign_in_as(tab, username: str, password: str) -> None:
    tab.sign_in(username, password)


def fits(page) -> bool:
    return page.evaluate(
        "() => document.documentElement.scrollWidth <= document.documentElement.clientWidth")


@pytest.mark.parametrize("width", [1280, 390])
def test_the_run_page_tells_the_whole_story(visitor, live_server, data, width):
    tab = visitor(width)
    run = data["runs"][1]
    page = tab.go(f"/runs/{run.pk}/")
    assert page.locator("#run-scores tbody tr").count() == 1  # one version, one corpus
    assert "every merge" in page.inner_text("main")
    page.click("text=Compare it with other versions")
    page.wait_for_url("**/compare/?versions=prose-bpe%402")
    assert fits(tab.go(f"/runs/{run.pk}/"))
    accessible(tab, "run-story")
    sign_in_as(tab, "member", "pw-member-1")
    page = tab.go(f"/runs/{run.pk}/")
    page.click("text=Run again with changes")
    page.wait_for_url("**/runs/new/?*")
    assert page.input_value("#id_vocab_size") == "600"
    assert page.input_value("#id_tokenizer") == "prose-bpe"
    accessible(tab, "run-again-form")


@pytest.mark.parametrize("width", [1280, 390])
def test_the_version_page_helps_people_use_it(visitor, live_server, data, width):
    tab = visitor(width)
    sign_in_as(tab, "staff", "pw-staff-1")
    page = tab.go("/tokenizers/prose-bpe/2/")
    assert "Tokenizer.from_file(\"tokenizer.json\")" in page.inner_text("#use")
    assert live_server.url + "/tokenizers/prose-bpe/2/download/hf/" in page.inner_text("#use")
    assert fits(page)
    accessible(tab, "version-use")
    page.fill("#alias-name", "candidate")
    page.click("text=Move the alias")
    page.wait_for_selector("text=alias candidate now points at prose-bpe@2")
    assert "candidate" in page.inner_text("h1")
    page.click("text=Publish prose-bpe@2")
    page.wait_for_selector("text=prose-bpe@2 is published")
    page = tab.go("/tokenizers/prose-bpe/2/vocab/")
    page.select_option("#vocab-sort", "length")
    page.click("form.search button[type=submit]")
    page.wait_for_url("**sort=length**")
    assert "longest first" in page.inner_text("#vocab-count")
    assert fits(page)
    accessible(tab, "vocab-by-length")
    page = tab.go("/tokenizers/prose-bpe/2/merges/")
    page.fill("#q", "th")
    page.click("form.search button[type=submit]")
    page.wait_for_url("**q=th**")
    assert "whose result holds “th”" in page.inner_text("#merge-count")
    accessible(tab, "merges-search")


@pytest.mark.parametrize("width", [1280, 390])
def test_an_evaluation_under_way_shows_its_progress_live_and_cancels(visitor, live_server, data,
                                                                     width):
    from datetime import timedelta

    from django.template.defaultfilters import filesizeformat
    from django.utils import timezone

    from tokenizers_app.models import Evaluation

    evaluation = Evaluation.objects.get(version__number=2, corpus__name="held-out")
    size = evaluation.corpus.size_bytes
    Evaluation.objects.filter(pk=evaluation.pk).update(
        status="running", metrics={}, bytes_done=size // 4,
        started_at=timezone.now() - timedelta(seconds=20))
    tab = visitor(width)
    sign_in_as(tab, "staff", "pw-staff-1")
    page = tab.go("/tokenizers/prose-bpe/2/")
    row = page.locator("#version-metrics tbody tr").filter(has_text="held-out")
    total = filesizeformat(size).replace("\xa0", " ")
    shown = row.inner_text().replace("\xa0", " ")
    assert f"computing… {filesizeformat(size // 4)} of {total}, about 1 min".replace(
        "\xa0", " ") in shown
    assert fits(page)
    accessible(tab, "evaluation-under-way")
    Evaluation.objects.filter(pk=evaluation.pk).update(bytes_done=size // 2)
    half = f"{filesizeformat(size // 2)} of {filesizeformat(size)}"
    page.wait_for_function(  # refreshed by htmx, with no reload
        "text => document.getElementById('version-metrics').innerText.includes(text)", arg=half)
    row.get_by_role("button", name="Cancel").click()
    page.wait_for_selector("text=the evaluation of prose-bpe@2 on held-out is cancelled")
    assert "cancelled: evaluate it again below" in page.inner_text("#version-metrics")
    assert Evaluation.objects.get(pk=evaluation.pk).status == "cancelled"
    accessible(tab, "evaluation-cancelled")
