"""Issue 21 in Chromium: a compare page that mixes kinds (byte-level BPE trained here, a
Llama-style BPE, a BERT WordPiece and a SentencePiece BPE imported) at 1280 and 390 pixels, and
the playground's strips of the same versions; screenshots kept, axe-core checked."""

from unittest import mock

import pytest

from tests.browser.test_journey import accessible
from tests.engines.test_engines import KINDS, TEXTS
from tests.registry.helpers import import_text, sample_text, train
from tokenizers_app.models import Evaluation
from tokenizers_app.services.versions import import_tokenizer

pytestmark = pytest.mark.slow
MIXED = ("llama-bpe", "bert-wordpiece", "sentencepiece-bpe")
REFS = "prose-bpe@1," + ",".join(f"{kind}@1" for kind in MIXED)


@pytest.fixture
def mixed_kinds(transactional_db):
    from tokenizers_app.services.evaluations import run_evaluation

    with mock.patch("celery.app.task.Task.apply_async"):
        corpus = import_text(sample_text(30_000), "prose")
        import_text(sample_text(6_000, offset=100_000) + TEXTS["cjk"] + TEXTS["emoji"] + "\n",
                    "held-out", is_evaluation=True)
        train(corpus, "prose-bpe", vocab_size=500)
        for kind in MIXED:
            import_tokenizer(files=KINDS[kind](), tokenizer_name=kind)
        for evaluation in Evaluation.objects.all():
            run_evaluation(evaluation_id=evaluation.pk)
    assert set(Evaluation.objects.values_list("status", flat=True)) == {"succeeded"}


def test_compare_mixing_kinds_reads_at_desktop_and_phone_widths(visitor, mixed_kinds):
    for width in (1280, 390):
        tab = visitor(width)
        page = tab.go(f"/compare/?versions={REFS}&corpus=held-out")
        heads = page.inner_text("#metrics thead")
        for label in ("byte-level BPE", "Hugging Face tokenizer.json", "SentencePiece model"):
            assert label in heads
        unknown = page.locator("#metrics td[data-metric='unknown_rate']").all_inner_texts()
        fallback = page.locator("#metrics td[data-metric='byte_fallback_rate']"
                                ).all_inner_texts()
        assert unknown[0] == "n/a" and fallback[2] == "n/a"  # byte-level: no <unk>; BERT: no
        assert all(value.rstrip("★ ").endswith("%") for value in fallback[1::2])
        lossless = page.locator("#metrics td[data-metric='lossless_rate']").all_inner_texts()
        assert lossless[0].startswith("100.0") and not lossless[2].startswith("100.0")
        notes = page.inner_text(".kind-notes")
        assert "its normalizer lowercases and strips accents" in notes
        widths = page.locator(".table-scroll").evaluate_all(
            "ts => ts.map(t => [t.scrollWidth, t.clientWidth])")
        assert page.evaluate("document.documentElement.scrollWidth") <= width, widths
        accessible(tab, "kinds-compare")


def test_the_playground_strips_of_every_kind(visitor, mixed_kinds):
    tab = visitor(1280)
    page = tab.go("/playground/")
    page.fill("#pg-versions", REFS)
    page.fill("#text", "Tokenizers meet 東京 and 🍕 in   code:\n\tx = 1\n")
    page.click("main form button[type=submit]")
    page.wait_for_selector("section.encoding >> nth=3")
    heads = page.locator("section.encoding h2").all_inner_texts()[:4]
    assert [head.split()[0] for head in heads] == REFS.split(",")
    assert all(head.endswith(" tokens") for head in heads)
    cut = page.locator("section.encoding .strip-facts").all_inner_texts()
    assert "characters cut into several tokens" in cut[1]  # Llama-style byte fallback on CJK
    accessible(tab, "kinds-playground")
