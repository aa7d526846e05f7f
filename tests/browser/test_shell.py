"""The shell around the pages (issue 19): ``manage.py start``'s own error pages, phone layouts,
the signed-in home. Screenshots at 1280 and 390 px in ``test-artifacts/screenshots/``."""

import os
import subprocess
import sys
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.processes import free_port, stop_group, wait_for_health
from tests.browser.conftest import SHOTS

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
# every element that leaves the page's width or clips its own text, outside a table's scroller
OVERFLOWS = """() => {
  const width = document.documentElement.clientWidth, found = [];
  for (const el of document.body.querySelectorAll('*')) {
    if (el.parentElement.closest('.table-scroll')) continue;
    const box = el.getBoundingClientRect(), style = getComputedStyle(el);
    if (box.width < 2 || style.visibility === 'hidden' || style.position === 'fixed') continue;
    const clips = ['hidden', 'clip'].includes(style.overflowX) && el.scrollWidth > el.clientWidth + 1;
    if (box.right > width + 1 || clips)
      found.push(el.tagName.toLowerCase() + (el.className ? '.' + el.className : '') + ': ' +
                 (el.innerText || '').slice(0, 40));
  }
  return found;
}"""


def overflowing(page) -> list[str]:
    """What leaves its box at this width (a table inside ``.table-scroll`` may scroll)."""
    return page.evaluate(OVERFLOWS)



@contextmanager
def started(tmp_path):
    """``manage.py start`` as a person runs it on a bare checkout (no environment at all)."""
    port = free_port()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/"),
           "REGISTRY_VAR_DIR": str(tmp_path / "var")}
    server = subprocess.Popen(
        [sys.executable, "manage.py", "start", "--no-demo", "--no-worker", f"127.0.0.1:{port}"],
        cwd=REPO, env=env, start_new_session=True, stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_health(base, server, 60, lambda: server.stderr.read().decode())
        yield base
    finally:
        stop_group(server, 20)


def test_start_serves_the_apps_own_not_found_page_that_fits_a_phone(browser, tmp_path):
    with started(tmp_path) as base:
        with pytest.raises(urllib.error.HTTPError) as answer:
            urllib.request.urlopen(base + "/tokenizers/copyright-bpe/production/")
        body = answer.value.read().decode()
        assert answer.value.code == 404
        assert "URLconf" not in body and "Page not found at" not in body
        assert "<h1>Not found</h1>" in body and "no tokenizer named" in body
        for width in (1280, 390):
            context = browser.new_context(viewport={"width": width, "height": 900})
            page = context.new_page()
            response = page.goto(base + "/no/such/page/")
            assert response.status == 404
            assert page.locator("h1").inner_text() == "Not found"
            # the stylesheet came from whitenoise with DEBUG off: the page is laid out
            assert page.evaluate("getComputedStyle(document.body).margin") != "8px"
            assert overflowing(page) == [], width
            SHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SHOTS / f"start-not-found-{width}.png"), full_page=True)
            context.close()


# a table's scroller that holds more than it shows says so (a visible hint); one that fits, not
SCROLLERS = """() => [...document.querySelectorAll('.table-scroll')].map(s => ({
  overflows: s.scrollWidth > s.clientWidth + 1,
  hinted: s.hasAttribute('data-overflows') && !!s.previousElementSibling &&
          s.previousElementSibling.matches('.scroll-hint') &&
          s.previousElementSibling.offsetHeight > 0}))"""


def test_every_page_fits_a_phone_and_tables_that_scroll_say_so(
        visitor, live_server, transactional_db, settings, tmp_path):
    from tests.registry.helpers import build_registry_data

    data = build_registry_data(settings, tmp_path)
    version = data["large"]
    pages = {"leaderboard": "/", "corpora": "/corpora/", "corpus": "/corpora/prose/",
             "runs": "/runs/", "run": f"/runs/{data['runs'][0].pk}/",
             "tokenizer": "/tokenizers/prose-bpe/", "version": "/tokenizers/prose-bpe/2/",
             "vocab": "/tokenizers/prose-bpe/2/vocab/", "merges": "/tokenizers/prose-bpe/2/merges/",
             "token": f"/tokenizers/prose-bpe/2/tokens/{version.vocab_size - 1}/",
             "compare": "/compare/?versions=prose-bpe@1,prose-bpe@2&corpus=held-out",
             "playground": "/playground/?versions=prose-bpe@1,prose-bpe@2&text=Hello+world%21",
             "login": "/accounts/login/", "upload": "/corpora/upload/", "run-new": "/runs/new/",
             "import": "/tokenizers/import/",
             "not-found": "/tokenizers/prose-bpe/production/"}
    tab = visitor(390)
    for name, path in pages.items():
        tab.page.goto(tab.base_url + path)
        tab.page.wait_for_load_state("load")
        assert overflowing(tab.page) == [], name
        for scroller in tab.page.evaluate(SCROLLERS):
            assert scroller["overflows"] == scroller["hinted"], (name, scroller)
        tab.shot(f"phone-{name}")
    # the runs list reads its status first, and a row is one line of text high
    page = tab.page
    page.goto(tab.base_url + "/runs/")
    assert page.locator("table.data thead th").first.inner_text() == "Status"
    heights = page.locator("table.data tbody tr").evaluate_all(
        "rows => rows.map(r => r.getBoundingClientRect().height)")
    assert heights and max(heights) < 40, heights
    # the version's length table keeps its caption whole, at the left where it is read
    page.goto(tab.base_url + "/tokenizers/prose-bpe/2/")
    text = page.locator("caption", has_text="Tokens per length").evaluate(
        "c => { const r = document.createRange(); r.selectNodeContents(c); "
        "const t = r.getBoundingClientRect(), s = c.closest('.table-scroll')"
        ".getBoundingClientRect(); return [t.left - s.left, s.right - t.right]; }")
    assert min(text) >= 0, text  # the caption's words lie inside the scroller's visible box


def test_a_signed_in_home_offers_the_next_steps_at_both_widths(
        visitor, live_server, transactional_db, settings, tmp_path):
    from tests.registry.helpers import build_registry_data

    data = build_registry_data(settings, tmp_path)
    run = data["runs"][1]
    type(run).objects.filter(pk=run.pk).update(created_by=data["member"])
    for width in (1280, 390):
        tab = visitor(width)
        page = tab.sign_in("member", "pw-member-1")
        steps = page.locator(".next-steps")
        assert steps.get_by_role("link", name="Upload a corpus").is_visible()
        assert steps.get_by_role("link", name="Start a run").is_visible()
        assert steps.get_by_role("link", name=f"Run {run.pk}: prose-bpe").is_visible()
        assert overflowing(page) == [], width
        assert tab.serious_accessibility_violations() == []
        tab.shot("home-signed-in")
        steps.get_by_role("link", name="Start a run").click()
        page.wait_for_url(tab.base_url + "/runs/new/")


def test_gpt2_files_import_from_the_browser_with_the_pattern_chosen_at_both_widths(
        visitor, live_server, transactional_db, settings, tmp_path):
    from tests.registry.helpers import build_registry_data
    from tokenizers_app.bpe.formats import dumps_tokenizer

    data = build_registry_data(settings, tmp_path)
    paths = []
    for name, content in dumps_tokenizer(data["small"].load_tokenizer(), "gpt2").items():
        paths.append(tmp_path / name)
        paths[-1].write_bytes(content)
    for width in (1280, 390):
        tab = visitor(width)
        page = tab.sign_in("member", "pw-member-1")
        page.locator(".next-steps").get_by_role("link", name="Import a tokenizer").click()
        page.wait_for_url(tab.base_url + "/tokenizers/import/")
        assert overflowing(page) == [], width
        assert tab.serious_accessibility_violations() == []
        page.fill("#id_tokenizer", f"gpt4-files-{width}")
        page.set_input_files("#id_files", [str(path) for path in paths])
        page.select_option("#id_pattern", "gpt4")
        tab.shot("import-form")
        page.get_by_role("button", name="Import").click()
        page.wait_for_url(tab.base_url + f"/tokenizers/gpt4-files-{width}/1/")
        assert page.get_by_text(f"gpt4-files-{width}@1 imported from merges.txt, vocab.json").is_visible()
        assert page.get_by_text("splits text with gpt4, as given").is_visible()
        assert overflowing(page) == [], width
        tab.shot("import-done")
