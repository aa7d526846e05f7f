"""Issue 19's loop on the pages: an evaluation corpus evaluates the versions that exist, the
leaderboard and compare show "computing…" until the numbers come, a version is evaluated on
request, and undefined or timing values are never marked best."""

import json

import pytest

from tokenizers_app.models import Evaluation
from tokenizers_app.services.evaluations import run_evaluation

pytestmark = pytest.mark.django_db


def page(client, url, status=200) -> str:
    response = client.get(url)
    assert response.status_code == status, response.content[:2000]
    return response.content.decode()


def section(html: str, heading: str) -> str:
    start = html.index(heading)
    return html[start:html.find("</section>", start)]


def test_marking_an_evaluation_corpus_ranks_the_versions_that_exist_on_it(client,
                                                                          registry_data):
    client.force_login(registry_data["staff"])
    answer = client.post("/corpora/prose/evaluation", {"evaluation": "on"}, follow=True)
    assert "every ready version is being evaluated on it" in answer.content.decode()
    board = section(page(client, "/"), 'On <a href="/corpora/prose/">prose</a>')
    assert board.count("computing…") == 2  # both versions, before a worker took them
    assert "prose-bpe@1" in board and "prose-bpe@2" in board
    for evaluation in Evaluation.objects.filter(corpus__name="prose"):
        run_evaluation(evaluation_id=evaluation.pk)
    board = section(page(client, "/"), 'On <a href="/corpora/prose/">prose</a>')
    assert "computing…" not in board and board.count("<tr") == 3  # heading and two ranks
    assert board.index("prose-bpe@2") < board.index("prose-bpe@1")
    assert "Evaluations on it" in page(client, "/corpora/prose/")


def test_the_version_page_evaluates_the_version_on_an_evaluation_corpus(client, registry_data):
    registry_data["corpus"].mark_evaluation()
    html = page(client, "/tokenizers/prose-bpe/1/")
    assert 'id="evaluate-form"' not in html  # anonymous visitors read, members act
    client.force_login(registry_data["member"])
    html = page(client, "/tokenizers/prose-bpe/1/")
    assert '<option value="prose">prose</option>' in html
    assert '<option value="held-out">' not in html  # already evaluated there
    answer = client.post("/tokenizers/prose-bpe/1/evaluate", {"corpus": "prose"}, follow=True)
    html = answer.content.decode()
    assert "prose-bpe@1 is being evaluated on prose" in html and "computing…" in html
    assert Evaluation.objects.get(version=registry_data["small"],
                                  corpus=registry_data["corpus"]).status == "queued"


def test_the_version_page_refuses_a_corpus_that_is_not_for_evaluation(client, registry_data):
    client.force_login(registry_data["member"])
    answer = client.post("/tokenizers/prose-bpe/1/evaluate", {"corpus": "prose"})
    assert answer.status_code == 400
    assert "is not an evaluation corpus" in answer.content.decode()
    assert not Evaluation.objects.filter(corpus=registry_data["corpus"]).exists()


def test_compare_reads_n_a_for_an_undefined_value_and_stars_no_timing(client, registry_data):
    for evaluation in Evaluation.objects.all():
        Evaluation.objects.filter(pk=evaluation.pk).update(
            metrics={**evaluation.metrics, "byte_fallback_rate": None})
    html = page(client, "/compare/?versions=prose-bpe@1,prose-bpe@2&corpus=held-out")
    cells = [cell for cell in html.split("<td")[1:] if 'data-metric="byte_fallback_rate"' in cell]
    assert len(cells) == 2 and all("n/a" in cell and "★" not in cell for cell in cells)
    throughput = [c for c in html.split("<td")[1:] if 'data-metric="encode_throughput' in c]
    assert len(throughput) == 2 and not any("★" in cell for cell in throughput)


def test_compare_charts_a_share_in_percent_as_its_table_does(client, registry_data):
    html = page(client, "/compare/?versions=prose-bpe@1,prose-bpe@2&corpus=held-out")
    start = html.index('<script id="charts-data" type="application/json">')
    charts = {chart["name"]: chart for chart in json.loads(
        html[html.index(">", start) + 1:html.index("</script>", start)])}
    coverage = [Evaluation.objects.get(version=registry_data[v]).metrics["word_coverage"]
                for v in ("small", "large")]
    assert charts["word_coverage"]["unit"] == "%" and charts["word_coverage"]["max"] == 100
    assert charts["word_coverage"]["values"] == pytest.approx([100 * c for c in coverage])
    assert f'data-metric="word_coverage">{100 * coverage[0]:.1f}' in html  # the cell, in %
    ratio = Evaluation.objects.get(version=registry_data["small"]).metrics["compression_ratio"]
    assert charts["compression_ratio"]["values"][0] == ratio
    assert charts["compression_ratio"]["max"] is None


def test_every_metric_has_its_definition_one_click_away(client, registry_data):
    from tokenizers_app.bpe.metrics import DEFINITIONS, HEADLINE_METRICS, METRICS

    assert DEFINITIONS.keys() == METRICS.keys()
    glossary = page(client, "/metrics/")
    for name, (label, unit, higher) in METRICS.items():
        entry = glossary[glossary.index(f'<dt id="{name}">'):]
        entry = entry[:entry.index("</dd>")]
        assert label in entry and DEFINITIONS[name][0].split(" (")[0] in entry, name
        assert (unit or "none") in entry, name
        assert ("no value is marked best" if name == "encode_throughput_mb_s" else
                f'{"higher" if higher else "lower"} is better') in entry, name
    compare = page(client, "/compare/?versions=prose-bpe@1,prose-bpe@2&corpus=held-out")
    for html, names in [(page(client, "/"), HEADLINE_METRICS),
                        (page(client, "/tokenizers/prose-bpe/1/"), HEADLINE_METRICS),
                        (compare, ["compression_ratio", "encode_throughput_mb_s"])]:
        for name in names:
            assert f'href="/metrics/#{name}"' in html, name


def test_the_leaderboard_hides_tokenizers_without_a_ready_version(client, registry_data):
    from tokenizers_app.models import Tokenizer

    Tokenizer.objects.create(name="cancelled-bpe")
    home = page(client, "/")
    assert "cancelled-bpe" not in home and "no ready version yet" not in home
    assert "prose-bpe" in section(home, 'id="all-tokenizers"') and 'href="/tokenizers/"' in home
    listed = page(client, "/tokenizers/")
    assert "cancelled-bpe" in listed and "no ready version yet" in listed
    assert "2 versions, latest: v2" in listed


def test_the_leaderboard_tells_versions_apart(client, registry_data):
    board = section(page(client, "/"), 'On <a href="/corpora/held-out/">held-out</a>')
    rows = board.split("<tr")[2:]
    assert len(rows) == 2
    for row in rows:
        assert "byte-level BPE" in row and "pattern <code>gpt2</code>" in row
        assert "1 special token ·" in row and "trained on prose" in row


def test_the_leaderboard_shows_the_sort_it_uses(client, registry_data):
    html = page(client, "/?sort=word_coverage")
    sorted_heading = html[html.index('aria-sort="descending"') - 40:]
    assert sorted_heading.index("sorted") < sorted_heading.index("Word coverage")
    assert '<span class="sort-cue" aria-hidden="true">▼</span> Word coverage' in html
    assert "Ranked by <strong>Word coverage</strong>, highest first" in html
    assert html.count('aria-sort=') == 1
    html = page(client, "/?sort=tokens_per_word")
    assert '<span class="sort-cue" aria-hidden="true">▲</span> Tokens per word' in html
    assert "Ranked by <strong>Tokens per word</strong>, lowest first" in html


def test_the_leaderboard_filters_by_a_vocab_size_range(client, registry_data):
    small, large = registry_data["small"], registry_data["large"]
    assert (small.vocab_size, large.vocab_size) == (300, 600)
    html = page(client, "/?min_vocab=400")
    assert large.label in html and small.label not in html
    assert "vocab size 400 to any" in html and 'href="?sort=word_coverage&amp;min_vocab=400"' \
        in html  # the other sorts keep the range
    html = page(client, "/?max_vocab=400&sort=tokens_per_word")
    assert small.label in html and large.label not in html
    html = page(client, "/?min_vocab=-3")
    assert "Vocab size from: Ensure this value is greater than or equal to 0." in html
    assert small.label in html and large.label in html  # a bad range filters nothing
