"""Every dashboard page answers, shows what a person needs, and stays within its queries."""

import pytest

from tokenizers_app.bpe.metric_text import metric_number
from tokenizers_app.bpe.metrics import HEADLINE_METRICS
from tokenizers_app.models import Corpus, Evaluation, Tokenizer, TrainingRun

pytestmark = pytest.mark.django_db


def page(client, url, status=200) -> str:
    response = client.get(url)
    assert response.status_code == status, response.content[:2000]
    return response.content.decode()


def test_the_leaderboard_ranks_the_versions_by_compression_ratio(client, registry_data):
    html = page(client, "/")
    large, small = registry_data["large"], registry_data["small"]
    assert html.index(large.label) < html.index(small.label)  # the larger vocab compresses more
    ratio = Evaluation.objects.get(version=large).metrics["compression_ratio"]
    assert f'<td class="num">{metric_number(ratio, "compression_ratio")}</td>' in html
    assert "bytes/token, higher is better" in html  # the unit, once, in the column heading
    assert "★ best" in html
    sorted_by_fertility = page(client, "/?sort=tokens_per_word")
    assert sorted_by_fertility.index(large.label) < sorted_by_fertility.index(small.label)


def test_the_tokenizers_page_lists_tokenizers_and_escapes_their_names(client):
    Tokenizer.objects.create(name="web-en-32k")
    Tokenizer.objects.create(name="<script>")

    html = page(client, "/tokenizers/")  # issue 19: no longer on the leaderboard ("/")

    assert "web-en-32k" in html and "no ready version yet" in html
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_every_read_page_answers_anonymous_visitors(client, registry_data):
    large = registry_data["large"]
    run = registry_data["runs"][1]
    for url in ["/", "/corpora/", "/corpora/prose/", "/runs/", f"/runs/{run.pk}/",
                "/tokenizers/prose-bpe/", "/tokenizers/prose-bpe/2/",
                "/tokenizers/prose-bpe/2/vocab/?q=th", "/tokenizers/prose-bpe/2/merges/",
                f"/tokenizers/prose-bpe/2/tokens/{large.vocab_size - 1}/",
                "/compare/?versions=prose-bpe@1,prose-bpe@2&corpus=held-out",
                "/playground/?versions=prose-bpe@1,prose-bpe@2&text=Hello+world"]:
        page(client, url)


def test_unknown_things_are_404_with_the_reason(client, registry_data):
    assert "has no version 9 (versions: 1, 2)" in page(client, "/tokenizers/prose-bpe/9/", 404)
    assert "no tokenizer named" in page(client, "/tokenizers/nothing/1/", 404)


def test_the_compare_page_shows_the_evaluation_rows_numbers(client, registry_data):
    html = page(client, "/compare/?versions=prose-bpe@1,prose-bpe@2&corpus=held-out")
    for version in (registry_data["small"], registry_data["large"]):
        evaluation = Evaluation.objects.get(version=version, corpus=registry_data["held_out"])
        for name, value in evaluation.metrics.items():
            if name in ("bytes", "chars", "tokens", "words", "lines"):
                continue
            assert f'data-metric="{name}">{metric_number(value, name)}' in html, name
    assert "Compression ratio <span class=\"unit\">(bytes/token)</span>" in html  # unit once, in the row


def test_the_compare_page_marks_the_best_and_charts_the_headline_metrics(client, registry_data):
    html = page(client, "/compare/?versions=prose-bpe@1,prose-bpe@2&corpus=held-out")
    large = Evaluation.objects.get(version=registry_data["large"]).metrics
    best = metric_number(large["compression_ratio"], "compression_ratio")
    assert (f'best-cell" data-metric="compression_ratio">{best} <span class="best" '
            f'title="best">★</span>') in html
    for name in HEADLINE_METRICS:
        assert f'<canvas id="chart-{name}"' in html, name


def test_the_compare_page_says_why_a_corpus_is_not_compared_on(client, registry_data):
    html = page(client, "/compare/?versions=prose-bpe@1,prose-bpe@2&corpus=prose")
    assert "&#x27;prose&#x27; is not an evaluation corpus" in html
    assert '<option value="held-out" selected>' in html  # the first evaluation corpus instead


def test_the_playground_counts_tokens_like_encode_ordinary(client, registry_data):
    text = "Tokenizers split text: ümlauts, 字节, 🙂 and    spaces."
    response = client.get("/playground/", {"versions": "prose-bpe@1,prose-bpe@2", "text": text})
    html = response.content.decode()
    for version in (registry_data["small"], registry_data["large"]):
        count = len(version.load_tokenizer().encode_ordinary(text))
        assert f'data-count="{count}"' in html
    assert f'data-count="{len(text.encode())}"' in html  # the bytes baseline
    assert f'data-count="{len(text)}"' in html  # the characters baseline


def test_the_playground_strip_gives_each_group_its_ids_and_escapes_the_text(
        client, registry_data):
    html = page(client, "/playground/?versions=prose-bpe@1&text=" + "🙂<")
    emoji = registry_data["small"].load_tokenizer().encode_ordinary("🙂")
    assert len(emoji) > 1  # the small version cuts the emoji into several tokens
    ids = " ".join(map(str, emoji))
    assert f'<span data-i="{ids}" class="s" data-n="{len(emoji)}">🙂</span>' in html
    [lt] = registry_data["small"].load_tokenizer().encode_ordinary("<")
    assert f'<span data-i="{lt}">&lt;</span>' in html
    assert f'<span data-i="{lt}"><</span>' not in html


def test_the_playground_caps_the_text_with_a_message(client, registry_data):
    html = page(client, "/playground/?versions=prose-bpe@1&text=" + "a" * 20_001)
    assert "the playground encodes at most 20000" in html


def test_the_playground_posts_its_text_and_links_a_short_one(client, registry_data):
    import html as entities
    import re

    text = "Hello world, 字节!"
    posted = client.post("/playground/", {"versions": "prose-bpe@1", "text": text})
    assert posted.status_code == 200
    shown = posted.content.decode()
    [link] = re.findall(r'<a href="(/playground/\?[^"]+)">Link to these results</a>', shown)
    assert posted["HX-Push-Url"] == entities.unescape(link)
    count = len(registry_data["small"].load_tokenizer().encode_ordinary(text))
    assert f'data-count="{count}"' in shown
    followed = page(client, entities.unescape(link))  # the link gives the same results
    assert f'data-count="{count}"' in followed and f'data-count="{len(text)}"' in followed


def test_a_playground_text_of_20000_characters_is_posted_whole(client, registry_data):
    text = "字" * 20_000  # 180 KB in a URL: a GET of 500 of them got gunicorn's 414
    posted = client.post("/playground/", {"versions": "prose-bpe@2", "text": text})
    assert posted.status_code == 200
    shown = posted.content.decode()
    assert f'data-count="{len(text)}"' in shown  # the characters baseline: every one
    assert f'data-count="{len(text.encode())}"' in shown
    assert "encodes at most" not in shown
    assert "This text is too long for a link" in shown and posted["HX-Push-Url"] == "false"


def test_a_run_page_answers_htmx_with_its_progress_fragment(client, registry_data):
    run = registry_data["runs"][0]
    response = client.get(f"/runs/{run.pk}/", HTTP_HX_REQUEST="true")
    html = response.content.decode()
    assert 'id="run-progress"' in html and "<html" not in html
    assert "Finished in" in html and "merges/s" in html
    assert response["HX-Refresh"] == "true"


def test_a_running_run_polls_every_two_seconds_and_shows_its_merges_per_second(
        client, registry_data):
    run = registry_data["runs"][0]
    TrainingRun.objects.filter(pk=run.pk).update(
        status="running", stage="merge", progress_done=10, progress_total=40,
        merges_per_second=5.0)
    html = page(client, f"/runs/{run.pk}/")
    assert 'hx-trigger="every 2s"' in html and "10 of 40 merges, 5 merges/s" in html
    assert "about 6.0 s left" in html


@pytest.mark.parametrize("url, most", [
    ("/", 12), ("/corpora/", 6), ("/corpora/prose/", 8), ("/runs/", 8),
    ("/tokenizers/prose-bpe/", 8), ("/tokenizers/prose-bpe/2/", 14),
    ("/tokenizers/prose-bpe/2/vocab/", 10), ("/tokenizers/prose-bpe/2/merges/", 10),
    ("/compare/?versions=prose-bpe@1,prose-bpe@2&corpus=held-out", 20),
    ("/playground/?versions=prose-bpe@1,prose-bpe@2&text=abc", 14)])
def test_pages_stay_within_a_bounded_number_of_queries(client, registry_data, url, most,
                                                       django_assert_max_num_queries):
    client.get(url)  # warm the per-process tokenizer cache
    with django_assert_max_num_queries(most):
        assert client.get(url).status_code == 200


def test_corpora_list_their_facts(client, registry_data):
    html = page(client, "/corpora/prose/")
    corpus = Corpus.objects.get(name="prose")
    assert corpus.sha256 in html and "Latin" in html and "Runs that trained on it" in html


def test_a_download_is_the_same_bytes_each_time_with_its_sha256_as_etag(client, registry_data):
    import hashlib

    first = client.get("/tokenizers/prose-bpe/2/download/hf/")
    again = client.get("/tokenizers/prose-bpe/2/download/hf/")
    data = first.getvalue()
    assert data and data == again.getvalue()
    assert first["ETag"] == f'"{hashlib.sha256(data).hexdigest()}"'
    assert first["Content-Disposition"] == 'attachment; filename="tokenizer.json"'
    assert client.get("/tokenizers/prose-bpe/2/download/hf/",
                      HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304
    zipped = client.get("/tokenizers/prose-bpe/2/download/gpt2/")
    assert zipped["Content-Disposition"] == 'attachment; filename="prose-bpe-gpt2.zip"'
    assert client.get("/tokenizers/prose-bpe/2/download/bogus/").status_code == 404
    assert client.get("/tokenizers/prose-bpe/2/download/sentencepiece/").status_code == 400


def test_a_format_that_cannot_hold_the_version_is_a_400_in_words_as_the_api_says(
        client, registry_data):
    from tests.registry.helpers import train

    train(registry_data["corpus"], "spaced", vocab_size=300, special_tokens=["a b"])
    page_answer = client.get("/tokenizers/spaced/1/download/minbpe/")  # once a 500
    api_answer = client.get("/api/tokenizers/spaced/versions/1/download?format=minbpe")
    assert page_answer.status_code == 400 == api_answer.status_code
    reason = "cannot export to minbpe: special token 'a b' holds whitespace"
    assert page_answer.content.decode() == reason == api_answer.json()["detail"]
    assert client.get("/tokenizers/spaced/1/download/hf/").status_code == 200


def test_special_tokens_with_control_characters_show_as_escapes_not_raw(client, registry_data):
    from tests.registry.helpers import train

    run = train(registry_data["corpus"], "tricky", vocab_size=300,
                special_tokens=["\u202eevil", "bell\x07", "a b"])
    for url in [f"/runs/{run.pk}/", "/tokenizers/tricky/1/"]:
        html = page(client, url)
        assert "\u202e" not in html and "\x07" not in html, url
        assert '<span class="tok-control">&lt;U+202E&gt;</span>' in html, url
        assert '<span class="tok-control">&lt;U+0007&gt;</span>' in html, url
        assert '<span class="tok-space">·</span>' in html, url


def _json_script(html: str, element_id: str):
    import json
    import re

    found = re.search(rf'<script id="{element_id}" type="application/json">(.*?)</script>', html)
    return json.loads(found.group(1))


def test_a_versions_token_lengths_count_its_non_special_tokens_by_bytes(client, registry_data):
    from collections import Counter

    large = registry_data["large"]
    tokenizer = large.load_tokenizer()
    specials = set(tokenizer.special_ids.values())
    expected = sorted(Counter(len(t) for i, t in tokenizer.vocab.items()
                              if i not in specials).items())
    lengths = _json_script(page(client, "/tokenizers/prose-bpe/2/"), "token-lengths-data")
    assert list(zip(lengths["lengths"], lengths["tokens"])) == expected
    assert sum(lengths["tokens"]) == large.vocab_size - 1  # all but <|endoftext|>


def test_a_runs_chart_samples_the_merge_counts_evenly_over_the_ranks(client, registry_data):
    run, version = registry_data["runs"][1], registry_data["large"]
    chart = _json_script(page(client, f"/runs/{run.pk}/"), "merge-counts-data")
    counts = version.load_tokenizer().merge_counts
    step = max(1, version.merge_count // 400)
    assert chart["ranks"] == list(range(0, version.merge_count, step))
    assert chart["counts"] == [counts[rank] for rank in chart["ranks"]]


def test_the_merges_page_shows_what_each_merge_makes(client, registry_data):
    from tokenizers_app.templatetags.tokens import token as shown  # the filter the page uses

    tokenizer = registry_data["large"].load_tokenizer()
    html = page(client, "/tokenizers/prose-bpe/2/merges/")
    first_id = 256 + len(tokenizer.special_tokens)  # the id of merge 0
    for rank in (0, 1, 2):
        left, right = tokenizer.merges[rank]
        assert f'/tokens/{first_id + rank}/">{shown(left + right)}</a>' in html
