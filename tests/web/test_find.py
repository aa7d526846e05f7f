"""Finding things (issue 33): the top bar links Tokenizers and Import, and its search box finds
a tokenizer, a corpus or a version by name."""

import re

import pytest

from tokenizers_app.services.staff import move_alias

pytestmark = pytest.mark.django_db


def top_bar(html: str) -> str:
    return html.split('<header class="top">', 1)[1].split("</header>", 1)[0]


def found(html: str, kind: str) -> list[str]:
    block = html.split(f'id="found-{kind}"', 1)
    return re.findall(r'<li><a href="[^"]+">([^<]+)</a>', block[1].split("</ul>", 1)[0]) \
        if len(block) > 1 else []


def test_the_top_bar_links_tokenizers_and_import_and_holds_a_search_box(client, registry_data):
    bar = top_bar(client.get("/").content.decode())
    assert '<a href="/tokenizers/">Tokenizers</a>' in bar
    assert '<a href="/tokenizers/import/">Import</a>' in bar
    assert 'action="/search/"' in bar and 'name="q"' in bar


def test_the_search_finds_tokenizers_and_corpora_by_part_of_their_name(client, registry_data):
    html = client.get("/search/", {"q": "PROSE"}).content.decode()
    assert found(html, "tokenizers") == ["prose-bpe"]
    assert found(html, "corpora") == ["prose"]
    assert found(html, "versions") == []
    assert found(client.get("/search/", {"q": "held"}).content.decode(), "corpora") == \
        ["held-out"]


def test_the_search_finds_versions_by_number_alias_or_all_of_a_tokenizer(client,
                                                                         registry_data):
    move_alias(version=registry_data["small"], name="production", user=registry_data["staff"])
    assert found(client.get("/search/", {"q": "prose-bpe@"}).content.decode(), "versions") == \
        ["prose-bpe@2", "prose-bpe@1"]
    assert found(client.get("/search/", {"q": "prose-bpe@2"}).content.decode(), "versions") == \
        ["prose-bpe@2"]
    assert found(client.get("/search/", {"q": "prose@prod"}).content.decode(), "versions") == \
        ["prose-bpe@1"]


def test_a_search_that_finds_nothing_says_so_in_words(client, registry_data):
    html = client.get("/search/", {"q": "<nothing>"}).content.decode()
    assert "Nothing is named like <strong>&lt;nothing&gt;</strong>" in html


def test_compare_offers_a_list_of_versions_grouped_by_tokenizer_with_kind_and_size(
        client, registry_data):
    """Compare started as an empty text box with no list or completion."""
    move_alias(version=registry_data["large"], name="production", user=registry_data["staff"])
    html = client.get("/compare/").content.decode()
    group = html.split('<fieldset class="picker-group" data-name="prose-bpe">', 1)[1]
    group = group.split("</fieldset>", 1)[0]
    assert re.findall(r'name="pick" value="([^"]+)"', group) == ["prose-bpe@2", "prose-bpe@1"]
    assert "byte-level BPE · 600 tokens" in group and '<span class="alias">production' in group
    completions = html.split('<datalist id="versions-choices">', 1)[1].split("</datalist>")[0]
    assert re.findall(r'<option value="([^"]+)"', completions) == [
        "prose-bpe@2", "prose-bpe@production", "prose-bpe@1"]  # NAME@ offers both
    assert 'label="= v2: byte-level BPE, vocab size 600"' in completions


def test_versions_checked_in_the_list_are_compared_without_script(client, registry_data):
    response = client.get("/compare/", {"pick": ["prose-bpe@1", "prose-bpe@2"],
                                        "corpus": "held-out"})
    html = response.content.decode()
    assert 'value="prose-bpe@1,prose-bpe@2"' in html  # the typed list, for the next change
    assert html.count('checked>') == 2
    assert 'id="compare-table"' in html or "Compression ratio" in html
    typed_and_picked = client.get("/compare/", {"versions": "prose-bpe@2",
                                                "pick": ["prose-bpe@2", "prose-bpe@1"]})
    assert 'value="prose-bpe@2,prose-bpe@1"' in typed_and_picked.content.decode()


def test_the_playground_has_the_same_picker(client, registry_data):
    html = client.post("/playground/", {"pick": ["prose-bpe@1"], "text": "hi"}).content.decode()
    assert 'data-name="prose-bpe"' in html and 'value="prose-bpe@1" checked' in html
    assert "Versions (1 to 4, comma separated)" in html
    assert '<section class="encoding">' in html  # encoded by the picked version
