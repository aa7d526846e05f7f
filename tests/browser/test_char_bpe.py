"""Character-level BPE in headless Chromium, against the live server and a real worker, at 1280
and 390 pixels wide: upload a corpus, choose the algorithm in the run form (its fields show, the
byte-level ones hide), watch the run end, train a byte-level version beside it, compare them on
an evaluation corpus (unknown rate beside byte-fallback rate), type text with characters outside
the alphabet in the playground, open a token's merge tree down to characters, and download the
subword-nmt codes and the hf file. Every page is checked with axe-core and kept as a
screenshot."""

import io
import re
import zipfile

import pytest

from tests.browser.test_journey import PASSWORD, accessible, sign_in, upload
from tests.registry.helpers import sample_text, wait_until
from tokenizers_app.models import Evaluation, TokenizerVersion

pytestmark = pytest.mark.slow


def start_run(tab, tokenizer: str, vocab_size: int, char_level: bool, name: str) -> None:
    page = tab.go("/runs/new/")
    byte_group = page.locator("fieldset[data-algorithm=byte_bpe]")
    char_group = page.locator("fieldset[data-algorithm=char_bpe]")
    assert byte_group.is_visible() and not char_group.is_visible()
    page.fill("#id_tokenizer", tokenizer)
    page.select_option("#id_corpus", "web")
    page.fill("#id_vocab_size", str(vocab_size))
    if char_level:
        page.check("input[name=algorithm][value=char_bpe]")
        assert char_group.is_visible() and not byte_group.is_visible()
        assert page.input_value("#id_special_tokens") == "<unk>"  # the default follows
        page.select_option("#id_split", "word_punct")
        page.fill("#id_min_word_frequency", "2")
        accessible(tab, name)
    page.click("main form button[type=submit]")
    page.wait_for_url(re.compile(r".*/runs/\d+/$"))
    page.wait_for_selector("text=Finished in", timeout=120_000)  # htmx polls, then reloads


@pytest.mark.parametrize("width", [1280, 390])
def test_a_user_trains_compares_and_ships_character_level_bpe(visitor, worker,
                                                              django_user_model, tmp_path,
                                                              width):
    django_user_model.objects.create_user("ada", password=PASSWORD)
    tab = visitor(width)
    sign_in(tab, "ada")
    (tmp_path / "web.txt").write_text(sample_text(120_000), encoding="utf-8")
    (tmp_path / "held.txt").write_text(sample_text(20_000, offset=250_000), encoding="utf-8")
    upload(tab, tmp_path / "web.txt", "web")
    upload(tab, tmp_path / "held.txt", "held-out", evaluation=True)

    start_run(tab, "classic", 600, True, "char-run-form")
    progress = tab.page.inner_text("main")
    assert "character-level BPE" in progress and "word_punct" in progress
    accessible(tab, "char-run")
    start_run(tab, "bytes", 600, False, "byte-run-form")
    wait_until(lambda: Evaluation.objects.filter(status="succeeded").count() == 2, 120,
               "both versions' evaluations")

    page = tab.go("/compare/?versions=classic@1,bytes@1&corpus=held-out")
    metrics = page.inner_text("#metrics")
    assert "Unknown rate" in metrics and "Byte-fallback rate" in metrics
    accessible(tab, "char-compare")

    page = tab.go("/playground/?versions=classic@1,bytes@1")
    text = "Tokenizers cut text: naïve café, 字节对 and ŝpaces."
    page.fill("#text", text)
    page.wait_for_selector(".encoding .count")
    char = TokenizerVersion.objects.get(tokenizer__name="classic").load_tokenizer()
    unknown = char.encode_ordinary(text).count(char.unk_id)
    assert unknown >= 3 and page.locator(".token-strip span.u").count() == unknown
    first = page.locator(".encoding .count").first.get_attribute("data-count")
    assert int(first) == len(char.encode_ordinary(text))
    page.locator(".token-strip span.u").first.click()
    assert "the unknown token" in page.inner_text("#token-detail")
    accessible(tab, "char-playground")

    longest = max((i for i in char.symbols if i not in char.special_ids.values()),
                  key=lambda i: (len(char.symbols[i]), -i))
    page = tab.go(f"/tokenizers/classic/1/tokens/{longest}/")
    assert page.locator("ol.tree li").count() >= 3
    assert page.locator(".tok-wordend").count() >= 1 or "</w>" not in char.symbols[longest]
    accessible(tab, "char-token")
    page = tab.go("/tokenizers/classic/1/vocab/?sort=length")
    assert page.locator(".tok-wordend").count() > 10
    accessible(tab, "char-vocab")

    page = tab.go("/tokenizers/classic/1/")
    assert page.locator("a.button:text-is('tiktoken')").count() == 0
    accessible(tab, "char-version")
    with page.expect_download() as download:
        page.click("a.button:text-is('subword-nmt')")
    saved = tmp_path / "codes.zip"
    download.value.save_as(saved)
    with zipfile.ZipFile(io.BytesIO(saved.read_bytes())) as archive:
        codes = archive.read("classic-subword-nmt/codes.txt").decode().splitlines()
    assert codes[0] == "#version: 0.2" and codes[1:] == [f"{a} {b}" for a, b in char.symbol_merges]
    with page.expect_download() as download:
        page.click("a.button:text-is('hf')")
    download.value.save_as(tmp_path / "tokenizer.json")
    from tokenizers import Tokenizer as HFTokenizer

    theirs = HFTokenizer.from_file(str(tmp_path / "tokenizer.json"))
    assert theirs.encode(text, add_special_tokens=False).ids == char.encode_ordinary(text)
