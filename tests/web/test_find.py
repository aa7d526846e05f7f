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
