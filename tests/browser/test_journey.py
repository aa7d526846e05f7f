"""What a new user does, in headless Chromium against the live server and a real worker: sign
in, upload corpora, start a run and watch it to the end, start a second one, compare them on an
evaluation corpus, type in the playground, open a token's merge tree, download tokenizer.json
and load it in Hugging Face ``tokenizers``. Every page is checked with axe-core and kept as a
screenshot at 1280 and 390 pixels wide."""

import re

import pytest

from tests.registry.helpers import sample_text, wait_until
from tokenizers_app.models import Evaluation, TokenizerVersion
from tokenizers_app.templatetags.metrics import metric_number

pytestmark = pytest.mark.slow

PASSWORD = "a-long-pass-phrase-1"


def accessible(tab, name: str) -> None:
    assert tab.serious_accessibility_violations() == [], name
    tab.shot(name)


def sign_in(tab, username: str) -> None:
    tab.sign_in(username, PASSWORD)


def upload(tab, path, name: str, evaluation: bool = False) -> None:
    page = tab.go("/corpora/upload/")
    accessible(tab, "corpus-upload")
    page.fill("#id_name", name)
    if evaluation:
        page.check("#id_evaluation")
    page.set_input_files("#id_file", str(path))
    page.click("#upload-form button[type=submit]")
    page.wait_for_url(f"{tab.base_url}/corpora/{name}/")


def start_run(tab, tokenizer: str, vocab_size: int, sweep: str = "") -> None:
    page = tab.go("/runs/new/")
    page.fill("#id_tokenizer", tokenizer)
    page.select_option("#id_corpus", "web")
    page.fill("#id_vocab_size", str(vocab_size))
    page.fill("#id_sweep", sweep)
    page.click("main form button[type=submit]")
    page.wait_for_url(re.compile(r".*/runs/\d+/$"))


def test_a_new_user_trains_compares_and_ships_a_tokenizer(visitor, worker, django_user_model,
                                                         tmp_path):
    django_user_model.objects.create_user("ada", password=PASSWORD)
    tab = visitor(1280)
    posts = []
    tab.page.on("request", lambda r: posts.append(r.headers) if r.method == "POST" else None)
    sign_in(tab, "ada")

    (tmp_path / "web.txt").write_text(sample_text(150_000), encoding="utf-8")
    (tmp_path / "held.txt").write_text(sample_text(20_000, offset=250_000), encoding="utf-8")
    upload(tab, tmp_path / "web.txt", "web")
    assert "sha256" in tab.page.content()
    accessible(tab, "corpus")
    upload(tab, tmp_path / "held.txt", "held-out", evaluation=True)

    start_run(tab, "web-bpe", 400)
    tab.page.wait_for_selector("text=Finished in", timeout=120_000)  # htmx polls, then reloads
    assert "merges/s" in tab.page.inner_text("#run-progress")
    accessible(tab, "run")
    start_run(tab, "web-bpe", 700, sweep="550")
    tab.page.wait_for_selector("text=Finished in", timeout=120_000)

    wait_until(lambda: Evaluation.objects.filter(status="succeeded").count() == 3, 120,
               "the three versions' evaluations to finish")
    page = tab.go("/compare/?versions=web-bpe@1,web-bpe@2,web-bpe@3&corpus=held-out")
    for version in TokenizerVersion.objects.order_by("number"):
        evaluation = Evaluation.objects.get(version=version)
        shown = page.locator("td[data-metric=compression_ratio]").nth(version.number - 1)
        assert shown.inner_text().split(" ★")[0] == metric_number(
            evaluation.metrics["compression_ratio"], "compression_ratio")
    assert "★" in page.inner_text("#metrics")
    page.wait_for_selector("#chart-sweep")
    accessible(tab, "compare")

    page = tab.go("/playground/?versions=web-bpe@1,web-bpe@3")
    text = "Tokenizers cut text: naïve café, 字节对, 🙂🙂 and   spaces."
    page.fill("#text", text)
    page.wait_for_selector(".encoding .count")
    counts = [int(c) for c in page.locator(".encoding .count").evaluate_all(
        "nodes => nodes.map(n => n.dataset.count)")]
    expected = [len(TokenizerVersion.objects.get(number=n).load_tokenizer().encode_ordinary(text))
                for n in (1, 3)]
    assert counts[:2] == expected and counts[2:] == [len(text.encode()), len(text)]
    accessible(tab, "playground")

    page = tab.go("/tokenizers/web-bpe/3/vocab/?q=th")
    page.locator("tbody tr td a").last.click()
    page.wait_for_selector("text=How it was built")
    assert page.locator("ol.tree li").count() >= 3
    accessible(tab, "token")

    page = tab.go("/tokenizers/web-bpe/3/")
    accessible(tab, "version")
    with page.expect_download() as download:
        page.click("a.button:text-is('hf')")
    saved = tmp_path / "tokenizer.json"
    download.value.save_as(saved)
    from tokenizers import Tokenizer as HFTokenizer

    ours = TokenizerVersion.objects.get(number=3).load_tokenizer()
    assert HFTokenizer.from_file(str(saved)).encode(text, add_special_tokens=False).ids == \
        ours.encode_ordinary(text)

    htmx_posts = [headers for headers in posts if "hx-request" in headers]
    assert htmx_posts and all("x-csrftoken" in headers for headers in htmx_posts)


@pytest.fixture
def nasty_version(db, tmp_path, settings):
    """A version whose vocabulary holds markup and control bytes."""
    from tokenizers_app.bpe import Tokenizer
    from tokenizers_app.bpe.formats import dumps_tokenizer
    from tokenizers_app.bpe.training import build_vocab
    from tokenizers_app.services.versions import import_tokenizer

    settings.MEDIA_ROOT = str(tmp_path / "media")
    specials = ["<script>alert(1)</script>", "<img src=x onerror=alert(2)>"]
    merges = [(b"\x1b", b"["), (b"\x00", b"\x07"), (b"<", b"b")]
    core = Tokenizer(build_vocab(merges, specials), merges, specials)
    return import_tokenizer(files=dumps_tokenizer(core, "native", "nasty"),
                            tokenizer_name="nasty")


def test_tokens_holding_markup_and_control_bytes_render_as_text(visitor, nasty_version,
                                                                transactional_db):
    tab = visitor(1280)
    for path, name in [("/tokenizers/nasty/1/", "nasty-version"),
                       ("/tokenizers/nasty/1/vocab/?q=%3C", "nasty-vocab"),
                       ("/tokenizers/nasty/1/tokens/0/", "nasty-token"),
                       ("/tokenizers/nasty/1/merges/", "nasty-merges"),
                       ("/playground/?versions=nasty@1&text=%3Cscript%3Ealert(3)%3C/script%3E",
                        "nasty-playground")]:
        page = tab.go(path)
        assert page.locator("script:not([src])").evaluate_all(
            "nodes => nodes.filter(n => n.textContent.includes('alert')).length") == 0
        tab.shot(name)
    page = tab.go("/tokenizers/nasty/1/vocab/?q=%3C")
    assert "<script>alert(1)</script>" in page.inner_text("main")
    assert "<U+001B>" in tab.go("/tokenizers/nasty/1/vocab/").inner_text("main")
    assert tab.dialogs == []


def test_every_page_reads_at_phone_width_and_tables_read_without_javascript(
        visitor, browser, live_server, transactional_db, settings, tmp_path):
    from tests.registry.helpers import build_registry_data

    data = build_registry_data(settings, tmp_path)
    run = data["runs"][0]
    pages = {"leaderboard": "/", "corpora": "/corpora/", "corpus": "/corpora/prose/",
             "runs": "/runs/", "run": f"/runs/{run.pk}/", "tokenizer": "/tokenizers/prose-bpe/",
             "version": "/tokenizers/prose-bpe/2/", "vocab": "/tokenizers/prose-bpe/2/vocab/",
             "merges": "/tokenizers/prose-bpe/2/merges/",
             "token": f"/tokenizers/prose-bpe/2/tokens/{data['large'].vocab_size - 1}/",
             "compare": "/compare/?versions=prose-bpe@1,prose-bpe@2&corpus=held-out",
             "playground": "/playground/?versions=prose-bpe@1,prose-bpe@2&text=Hello+world%21",
             "login": "/accounts/login/"}
    for width in (1280, 390):
        tab = visitor(width)
        for name, path in pages.items():
            tab.go(path)
            accessible(tab, f"page-{name}")
        # two versions side by side fit a phone's width: no column scrolled out of sight
        tables = tab.go(pages["compare"]).locator(".table-scroll")
        assert tables.count() == 2
        assert tables.evaluate_all("ts => ts.every(t => t.scrollWidth <= t.clientWidth)"), width
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(live_server.url + "/")
    assert page.locator("table.data tbody tr").count() == 2
    page.goto(live_server.url + "/compare/?versions=prose-bpe@1,prose-bpe@2&corpus=held-out")
    assert page.locator("#metrics tbody tr").count() >= 10
    context.close()
