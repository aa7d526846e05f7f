"""The run form takes a weight per chosen corpus; the run page and the version's lineage show
the weights, and "Run again with changes" keeps them (issue 32, training toward parity)."""

from urllib.parse import parse_qs, urlparse

import pytest

from tests.registry.helpers import import_text, made_up_words
from tokenizers_app.models import TrainingRun
from tokenizers_app.services.runs import execute_training_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def xx(registry_data):
    return import_text(made_up_words(4000, seed=7), "xx")


def _start(client, **fields):
    data = {"tokenizer": "w", "corpus": "prose", "algorithm": "byte_bpe", "pattern": "gpt2",
            "vocab_size": 300, "min_frequency": 1, **fields}
    return client.post("/runs/new/", data)


def test_the_form_starts_a_run_with_a_weight_per_chosen_corpus(client, registry_data, xx):
    client.force_login(registry_data["member"])
    made = _start(client, weight=2, more_corpora="xx:5\n")

    assert made.status_code == 302, made.content.decode()[:3000]
    run = TrainingRun.objects.get(pk=made.url.strip("/").rsplit("/", 1)[1])
    assert run.corpus_weights == {"prose": 2, "xx": 5}
    execute_training_run(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == TrainingRun.Status.SUCCEEDED, run.error

    html = client.get(f"/runs/{run.pk}/").content.decode()
    assert "×2</strong>" in html and "×5</strong>" in html
    version = run.versions.get()
    lineage = client.get(f"/tokenizers/{version.tokenizer.name}/{version.number}/")
    assert lineage.status_code == 200
    assert "×5</strong>" in lineage.content.decode()

    link = html.split('">Run again with changes</a>')[0].rsplit('<a href="', 1)[1]
    query = parse_qs(urlparse(link.replace("&amp;", "&")).query, keep_blank_values=True)
    assert query["corpus"] == ["prose"] and query["weight"] == ["2"]
    assert query["more_corpora"] == ["xx:5"]
    form = client.get(link.replace("&amp;", "&")).content.decode()
    assert 'name="weight" value="2"' in form and "xx:5</textarea>" in form


def test_a_plain_run_from_the_form_has_no_weights(client, registry_data):
    client.force_login(registry_data["member"])
    made = _start(client)
    assert made.status_code == 302
    run = TrainingRun.objects.get(pk=made.url.strip("/").rsplit("/", 1)[1])
    assert run.corpus_weights == {}
    assert list(run.corpora.values_list("name", flat=True)) == ["prose"]


@pytest.mark.parametrize("fields, words", [
    ({"weight": 0}, "a corpus weight is a whole number from 1 to 100, not 0"),
    ({"weight": 101}, "not 101"),
    ({"weight": "two"}, "Enter a whole number"),
    ({"more_corpora": "xx:lots"}, "xx:lots: the weight after &#x27;:&#x27; is a whole number"),
    ({"more_corpora": "xx:0"}, "corpus &#x27;xx&#x27;: a corpus weight is a whole number"),
    ({"more_corpora": "prose"}, "corpus &#x27;prose&#x27; is given twice"),
])
def test_the_form_refuses_bad_weights_in_words(client, registry_data, xx, fields, words):
    client.force_login(registry_data["member"])
    before = TrainingRun.objects.count()
    refused = _start(client, **fields)

    assert refused.status_code == 400, refused.status_code
    assert words in refused.content.decode()
    assert TrainingRun.objects.count() == before
