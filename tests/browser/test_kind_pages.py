"""Issue 30 in Chromium: the version, vocabulary, merge-table and token pages of a WordPiece,
a SentencePiece BPE and Unigram, a character-level and a byte-level version, each at 1280 and
390 pixels: each says what its kind holds and how its tokens are made, fits the width, passes
axe-core and is kept as a screenshot."""

from unittest import mock

import pytest

from tests.browser.test_journey import accessible
from tests.engines.test_engines import KINDS
from tests.registry.helpers import import_text, sample_text, train
from tokenizers_app.engines import describe
from tokenizers_app.services.versions import import_tokenizer

pytestmark = pytest.mark.slow

# tokenizer name -> (what its version page says first, what its merge table says)
EXPECTED = {
    "bert-wordpiece": ("Hugging Face WordPiece: ", "WordPiece has no merges"),
    "sentencepiece-bpe": ("SentencePiece BPE: ", "read from its pieces and scores"),
    "sentencepiece-unigram": ("SentencePiece Unigram: ", "Unigram has no merges"),
    "classic": ("character-level BPE: ", "The count is how often the pair occurred"),
    "prose-bpe": ("byte-level BPE: ", "The count is how often the pair occurred"),
}


@pytest.fixture
def every_kind(transactional_db):
    with mock.patch("celery.app.task.Task.apply_async"):
        corpus = import_text(sample_text(30_000), "prose")
        train(corpus, "prose-bpe", vocab_size=500)
        train(corpus, "classic", vocab_size=300, algorithm="char_bpe", split="word_punct")
        versions = {kind: import_tokenizer(files=KINDS[kind](), tokenizer_name=kind)
                    for kind in ("bert-wordpiece", "sentencepiece-bpe", "sentencepiece-unigram")}
    from tokenizers_app.models import TokenizerVersion
    return {name: TokenizerVersion.objects.get(tokenizer__name=name, number=1)
            for name in EXPECTED} | versions


def _longest(version) -> int:
    tokenizer = version.cached_tokenizer()
    leaves = set(tokenizer.special_ids.values()) | set(getattr(tokenizer, "byte_ids", ()))
    return max((i for i in tokenizer.vocab if i not in leaves and i != tokenizer.unk_id),
               key=lambda i: (len(tokenizer.vocab[i]), -i))


def _fits(tab, width: int) -> None:
    assert tab.page.evaluate("document.documentElement.scrollWidth") <= width


def test_each_kinds_pages_describe_it_truly(visitor, every_kind):
    """At each width in turn, on one registry of every kind (built once for both widths)."""
    for width in (1280, 390):
        each_kinds_pages_describe_it_truly(visitor(width), every_kind, width)


def each_kinds_pages_describe_it_truly(tab, every_kind, width: int) -> None:
    for name, (first, merges_say) in EXPECTED.items():
        version = every_kind[name]
        kind = describe(version.cached_tokenizer())
        page = tab.go(f"/tokenizers/{name}/1/")
        holds = page.inner_text("#version-holds")
        assert holds.startswith(f"{first}{version.vocab_size} tokens, ") and \
            ", ".join(kind.holds) in holds
        downloads = page.inner_text("#download-formats")
        assert ("256 bytes" in holds) == (name == "prose-bpe")
        assert ("tiktoken:" in downloads) == (name == "prose-bpe")
        _fits(tab, width)
        accessible(tab, f"kind-version-{name}")

        page = tab.go(f"/tokenizers/{name}/1/vocab/")
        assert f"not shown: {kind.base_tokens}" in page.inner_text("#vocab-count")
        _fits(tab, width)
        accessible(tab, f"kind-vocab-{name}")

        page = tab.go(f"/tokenizers/{name}/1/merges/")
        assert merges_say in page.inner_text("#merge-count")
        _fits(tab, width)
        accessible(tab, f"kind-merges-{name}")

        page = tab.go(f"/tokenizers/{name}/1/tokens/{_longest(version)}/")
        made = page.inner_text("#token-made")
        if kind.has_merges:
            assert "Made by merge rank" in made
            assert page.inner_text("main h2") == f"How it was built, down to {kind.base}"
        else:
            assert kind.merges.split(":")[0] in made and "down to" not in page.inner_text("main")
        _fits(tab, width)
        accessible(tab, f"kind-token-{name}")


@pytest.mark.parametrize("width", [1280, 390])
def test_the_import_page_says_what_each_format_needs(visitor, transactional_db,
                                                     django_user_model, width):
    from tests.browser.test_journey import PASSWORD, sign_in
    django_user_model.objects.create_user("ada", password=PASSWORD)
    tab = visitor(width)
    sign_in(tab, "ada")
    page = tab.go("/tokenizers/import/")
    needs = page.inner_text("ul.format-needs")
    assert "a published encoding's file alone" in needs and "tekken.json" in needs
    assert page.locator("#id_special_tokens").is_visible()
    _fits(tab, width)
    accessible(tab, "kind-import")
