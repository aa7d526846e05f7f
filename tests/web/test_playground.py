"""The playground (issue 19): a compact strip whose tokens never break, ids on request, cut
characters and the versions' differences marked, one version allowed, a loading state."""

import re

import pytest

from tokenizers_app.bpe.token_groups import mark_differences, token_groups

pytestmark = pytest.mark.django_db

TWO = "prose-bpe@1,prose-bpe@2"


def post(client, versions: str, text: str) -> str:
    response = client.post("/playground/", {"versions": versions, "text": text})
    assert response.status_code == 200, response.content[:2000]
    return response.content.decode()


def sections(html: str) -> dict[str, str]:
    """Each version's section of the results, by its label."""
    found = re.findall(r'<section class="encoding">\s*<h2>([^<]+?) <span(.*?)</section>', html,
                       re.S)
    return {label: body for label, body in found}


def test_one_version_is_enough_and_the_label_says_so(client, registry_data):
    html = post(client, "prose-bpe@1", "Hello world")
    assert "Versions (1 to 4, comma separated)" in html and "2 to 4" not in html
    count = len(registry_data["small"].load_tokenizer().encode_ordinary("Hello world"))
    assert f'data-count="{count}"' in html
    assert "cut differently" not in html  # nothing to compare with


def test_more_than_four_versions_are_refused_in_words(client, registry_data):
    html = post(client, "a@1,b@1,c@1,d@1,e@1", "hi")
    assert "compare at most 4 versions at once, not 5" in html


def test_the_strip_has_no_title_per_token_and_no_baseline_strip(client, registry_data):
    html = post(client, TWO, "Hello, tokenizers!")
    assert "title=" not in html.split('id="results"', 1)[1]
    assert html.count('class="token-strip"') == 2  # the versions; the baselines are counts
    assert f'data-count="{len("Hello, tokenizers!")}"' in html  # bytes and characters


def test_cut_characters_are_marked_and_counted(client, registry_data):
    text = "tea 字 🙂 and €"
    html = post(client, "prose-bpe@1", text)
    groups = token_groups(registry_data["small"].load_tokenizer(), text)
    cut = [g for g in groups if len(g["ids"]) > 1]
    assert len(cut) == 3  # the small version cuts each of the three
    assert f'data-cut="3"' in html and "3 characters cut into several tokens" in html
    assert f'({sum(len(g["ids"]) for g in cut)} tokens)' in html
    assert html.count('class="s" data-n=') == 3
    assert 'a character cut into several tokens' in html  # the legend


def test_tokens_the_other_version_cuts_differently_are_marked_and_counted(client,
                                                                           registry_data):
    text = "The tokenizers split these sentences in their own ways."
    html = post(client, TWO, text)
    groupings = [token_groups(registry_data[k].load_tokenizer(), text) for k in ("small", "large")]
    expected = mark_differences(groupings)
    assert expected[0] > 0 and expected[1] > 0
    shown = sections(html)
    for label, count in zip(("prose-bpe@1", "prose-bpe@2"), expected):
        assert f'data-differs="{count}"' in shown[label]
        assert len(re.findall(r'class="(?:s )?d"', shown[label])) == count


def test_a_group_holding_a_newline_ends_the_strips_line(client, registry_data):
    html = post(client, "prose-bpe@1", "one\ntwo")
    assert re.search(r'<span data-i="[\d ]+"><i>↵</i></span><br>', html)


def test_the_form_shows_a_loading_state_and_an_ids_toggle(client, registry_data):
    html = post(client, "prose-bpe@1", "hi")
    assert 'hx-indicator="#playground-out"' in html
    assert '<span class="loading" role="status">Encoding…</span>' in html
    assert 'id="show-ids"' in html and 'id="token-detail"' in html


def test_20000_characters_come_back_in_a_fraction_of_the_old_html(client, registry_data):
    from bench.pages import prose

    text = prose(20_000, 0)
    html = post(client, TWO, text)
    assert f'data-count="{len(text)}"' in html
    # one token was about 85 bytes of HTML with its title and nested spans (6.7 MB for this
    # text in two versions and two baselines); the strip now keeps to about 30
    tokens = sum(len(v.load_tokenizer().encode_ordinary(text))
                 for v in (registry_data["small"], registry_data["large"]))
    assert len(html.encode()) < 40 * tokens


def test_two_unknown_versions_are_both_named_and_no_results_chrome_is_shown(client,
                                                                          registry_data):
    """It once named only the first, then still showed the link, the legend and the
    baselines below the error."""
    html = post(client, "nothing@1,prose-bpe@1,absent@2", "Hello world")
    results = html.split('id="results"', 1)[1]
    assert "no tokenizer named &#x27;nothing&#x27;" in results
    assert "no tokenizer named &#x27;absent&#x27;" in results
    assert "Link to these results" not in results
    assert "Each colored box is one token" not in results
    assert "Baselines, for scale" not in results
    assert "Type a text" not in results
