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
    for route in held:
        route.continue_()
    page.wait_for_selector("#playground-out .loading", state="hidden")
    assert "again" in page.inner_text("#results")
