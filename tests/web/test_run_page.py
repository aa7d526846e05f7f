"""The run page finishes the story (issue 19): why a run stopped early, its versions' scores,
"Compare this sweep" and "Run again with changes", right ordinals, and a queued text that
speaks of waiting and warns of a lost task only when the queue really was down."""

from urllib.parse import parse_qs, urlparse

import pytest
from django.utils.html import escape

from tests.registry.helpers import import_text, sample_text, train
from tokenizers_app.bpe.compiled import CORE_PATH
from tokenizers_app.bpe.metric_text import metric_number
from tokenizers_app.models import Evaluation, TrainingRun
from tokenizers_app.templatetags.metrics import ordinal

pytestmark = pytest.mark.django_db


def page(client, url) -> str:
    response = client.get(url)
    assert response.status_code == 200, response.content[:2000]
    return response.content.decode()


@pytest.mark.parametrize("number, said", [(1, "1st"), (2, "2nd"), (3, "3rd"), (4, "4th"),
                                          (11, "11th"), (12, "12th"), (13, "13th"),
                                          (21, "21st"), (111, "111th"), (121, "121st"),
                                          (122, "122nd"), (1003, "1003rd")])
def test_ordinals_read_right(number, said):
    assert ordinal(number) == said


def test_the_merge_chart_says_every_nth_merge_with_the_right_ending(client, registry_data,
                                                                    monkeypatch):
    run = registry_data["runs"][1]  # 600 tokens: 343 merges
    monkeypatch.setattr("tokenizers_app.views.runs.CHART_POINTS", 2)  # every 171st merge
    html = page(client, f"/runs/{run.pk}/")
    assert "every 171st merge" in html and "171th" not in html


def test_a_run_that_runs_out_of_pairs_says_why(client, settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    corpus = import_text("ab ab ab abc", "tiny")
    run = train(corpus, "tiny-bpe", vocab_size=400, min_frequency=2)
    version = run.versions.get()
    assert version.vocab_size < 400
    made = version.vocab_size - 256
    assert run.stop_reason == f"no pair left with count >= 2 after {made} of 144 merges"
    html = page(client, f"/runs/{run.pk}/")
    assert "Stopped early:" in html and escape(run.stop_reason) in html
    assert "smaller than the 400 tokens asked for" in html


def test_a_run_that_made_every_merge_says_nothing_of_stopping(client, registry_data):
    run = registry_data["runs"][0]
    assert run.stop_reason == ""
    assert "Stopped early" not in page(client, f"/runs/{run.pk}/")


def test_the_run_page_names_the_bpe_core_that_ran_it(client, registry_data):
    run = registry_data["runs"][0]
    assert run.core_path == CORE_PATH
    assert f"BPE core: {CORE_PATH}" in page(client, f"/runs/{run.pk}/")


def test_the_run_page_shows_its_versions_scores(client, registry_data):
    run, version = registry_data["runs"][1], registry_data["large"]
    evaluation = Evaluation.objects.get(version=version, corpus=registry_data["held_out"])
    html = page(client, f"/runs/{run.pk}/")
    assert 'id="run-scores"' in html
    ratio = metric_number(evaluation.metrics["compression_ratio"], "compression_ratio")
    assert f'<td class="num">{ratio}</td>' in html
    Evaluation.objects.filter(pk=evaluation.pk).update(status="queued")
    assert "computing…" in page(client, f"/runs/{run.pk}/")


def test_a_sweep_links_to_compare_its_versions(client, settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    corpus = import_text(sample_text(20_000), "prose")
    run = train(corpus, "sweep-bpe", vocab_size=500, sweep=[300, 400])
    html = page(client, f"/runs/{run.pk}/")
    assert ('<a href="/compare/?versions=sweep-bpe%401%2Csweep-bpe%402%2Csweep-bpe%403">'
            'Compare this sweep</a>') in html


def test_run_again_prefills_the_form_with_the_runs_parameters(client, registry_data,
                                                              django_user_model):
    run = registry_data["runs"][0]
    html = page(client, f"/runs/{run.pk}/")
    link = html.split('">Run again with changes</a>')[0].rsplit('<a href="', 1)[1]
    link = link.replace("&amp;", "&")
    query = parse_qs(urlparse(link).query, keep_blank_values=True)
    assert query["tokenizer"] == ["prose-bpe"] and query["corpus"] == ["prose"]
    assert query["vocab_size"] == ["300"] and query["special_tokens"] == ["<|endoftext|>"]
    client.force_login(registry_data["member"])
    form = page(client, link)
    assert 'name="vocab_size" value="300"' in form
    assert 'name="tokenizer" value="prose-bpe"' in form
    assert '<option value="gpt2" selected>' in form


def test_a_custom_pattern_and_no_special_tokens_prefill_as_such(client, registry_data):
    from tokenizers_app.views.runs import rerun_params

    run = registry_data["runs"][0]
    run.parameters = {**run.parameters, "pattern": r"\w+|\W", "special_tokens": []}
    params = rerun_params(run, [registry_data["corpus"]])
    assert params["pattern"] == "custom" and params["custom_pattern"] == r"\w+|\W"
    client.force_login(registry_data["member"])
    from urllib.parse import urlencode
    form = page(client, "/runs/new/?" + urlencode(params))
    assert "&lt;|endoftext|&gt;</textarea>" not in form  # no special token: none prefilled


def test_a_queued_run_speaks_of_waiting_without_warning(client, registry_data):
    run = registry_data["runs"][0]
    TrainingRun.objects.filter(pk=run.pk).update(status="queued")
    html = page(client, f"/runs/{run.pk}/")
    assert "waiting for a worker" in html and "it starts as soon as a worker is free" in html
    assert "lost" not in html and "could not be sent" not in html
    run.refresh_from_db()
    run.mark_unsent()
    assert "Its task could not be sent: the task queue did not answer" in page(
        client, f"/runs/{run.pk}/")


def test_a_char_level_run_below_its_alphabet_says_why_its_version_is_larger(client, settings,
                                                                            tmp_path):
    """It once "succeeded" with 334 tokens for a requested 10, with no word about it."""
    settings.MEDIA_ROOT = str(tmp_path / "media")
    corpus = import_text("the quick brown fox jumps over the lazy dog " * 20, "letters")
    run = train(corpus, "letters-char", vocab_size=10, algorithm="char_bpe")
    version = run.versions.get()
    assert version.vocab_size > 10
    html = page(client, f"/runs/{run.pk}/")
    assert "Larger than asked:" in html
    assert f"the version has {version.vocab_size} tokens, not the 10 asked for" in html
    assert "Stopped early" not in html
    assert "every word kept" in html and "fewer than 1 time" not in html


def test_the_finished_line_does_not_set_the_merge_rate_beside_the_whole_runs_time(client,
                                                                                  registry_data):
    """"Finished in 1.4 s at 131237 merges/s" put the merge stage's rate beside the whole
    run's time."""
    run = registry_data["runs"][0]
    html = page(client, f"/runs/{run.pk}/")
    finished = html.split("Finished in", 1)[1].split("</p>", 1)[0]
    assert "the merge stage took" in finished and "merges/s" in finished
    assert "</strong> at " not in finished
    assert "Larger than asked" not in html  # byte-level: never
