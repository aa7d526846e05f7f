"""Headless Chromium (Debian's ``chromium``) driven by Playwright, against the live server.

Without ``/usr/bin/chromium`` these tests skip and say why; in CI (``CI=true``) that is a
failure. Screenshots go to ``test-artifacts/screenshots/NAME-WIDTH.png``.
"""

import os
from pathlib import Path

import pytest

CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
SHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
WIDTHS = (1280, 390)
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# axe-core, vendored with the app's static files: served by the live server, so each tab's
# browser keeps it in its cache and its compiled code (sent as text, it was parsed again for
# every page checked: a quarter of the time of a check)
AXE = "/static/tokenizers_app/vendor/axe-core-4.14.1.min.js"


def _need_chromium():
    if not CHROMIUM.is_file():
        reason = f"{CHROMIUM} not found: install Debian's chromium (apt-get install chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)


@pytest.fixture(scope="session")
def browser():
    _need_chromium()
    from playwright.sync_api import sync_playwright

    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright runs an event loop
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS,
                                              headless=True)
        yield chromium
        chromium.close()


class Visitor:
    """One person's browser tab: visits pages, fails on any dialog, keeps screenshots and checks
    accessibility of every page it visits."""

    def __init__(self, browser, base_url: str, width: int = 1280):
        self.context = browser.new_context(viewport={"width": width, "height": 900},
                                           accept_downloads=True)
        self.page = self.context.new_page()
        self.base_url, self.width, self.dialogs = base_url, width, []
        self.page.on("dialog", lambda dialog: (self.dialogs.append(dialog.message),
                                               dialog.dismiss()))
        self.page.set_default_timeout(20_000)

    def go(self, path: str):
        response = self.page.goto(self.base_url + path)
        assert response.status < 400, f"{path} answered {response.status}"
        return self.page

    def sign_in(self, username: str, password: str):
        """Sign in through the login form; the tab lands on the home page."""
        page = self.go("/accounts/login/")
        page.fill("#id_username", username)
        page.fill("#id_password", password)
        page.click("main form button[type=submit]")
        page.wait_for_url(self.base_url + "/")
        return page

    def shot(self, name: str) -> Path:
        SHOTS.mkdir(parents=True, exist_ok=True)
        path = SHOTS / f"{name}-{self.width}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def serious_accessibility_violations(self) -> list[str]:
        self.page.add_script_tag(url=self.base_url + AXE)
        violations = self.page.evaluate(
            "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
            ".filter(v => v.impact === 'serious' || v.impact === 'critical')"
            ".map(v => v.id + ': ' + v.help + ' (' + v.nodes.length + ' nodes, e.g. ' +"
            " v.nodes[0].html.slice(0, 120) + ')')")
        return violations

    def close(self):
        assert self.dialogs == [], f"a dialog opened: {self.dialogs}"
        self.context.close()


@pytest.fixture
def visitor(browser, live_server):
    visitors = []

    def open_tab(width: int = 1280) -> Visitor:
        visitors.append(Visitor(browser, live_server.url, width))
        return visitors[-1]

    yield open_tab
    for tab in visitors:
        tab.close()
