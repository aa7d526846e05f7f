"""``POST /api/runs`` with weighted corpora, and ``manage.py train --corpus NAME:WEIGHT``:
accepted and stored, refused in words; the run's API answer and lineage give the weights."""

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.api.conftest import bearer
from tests.api.test_writes import post_json
from tests.registry.helpers import import_text, made_up_words
from tokenizers_app.models import TrainingRun

pytestmark = pytest.mark.django_db


@pytest.fixture
def other(registry):
    return import_text(made_up_words(4000, seed=5), "xx")


def test_the_api_takes_weighted_corpora_besides_names(client, registry, other):
    key = bearer(registry["member_key"])
    made = post_json(client, "/api/runs", {
        "tokenizer": "w", "vocab_size": 300,
        "corpora": ["prose", {"name": "xx", "weight": 4}]}, **key)

    assert made.status_code == 201, made.content
    assert made.json()["corpus_weights"] == {"xx": 4}
    assert sorted(made.json()["corpora"]) == ["prose", "xx"]
    assert TrainingRun.objects.get(pk=made.json()["id"]).corpus_weights == {"xx": 4}
    plain = post_json(client, "/api/runs", {"tokenizer": "p", "vocab_size": 300,
                                            "corpora": ["prose", "xx"]}, **key)
    assert plain.status_code == 201 and plain.json()["corpus_weights"] == {}


@pytest.mark.parametrize("corpus, status, words", [
    ({"name": "xx", "weight": 0}, 400, "corpus 'xx': a corpus weight is a whole number from 1"),
    ({"name": "xx", "weight": 500}, 400, "from 1 to 100, not 500"),
    ({"name": "xx", "weight": 2.5}, 422, "integer"),
    ({"name": "xx", "share": 2}, 422, "Extra inputs are not permitted"),
    ({"name": "nope", "weight": 2}, 404, "nope"),
])
def test_the_api_refuses_bad_weights_in_words(client, registry, other, corpus, status, words):
    before = TrainingRun.objects.count()
    refused = post_json(client, "/api/runs", {"tokenizer": "w", "vocab_size": 300,
                                              "corpora": ["prose", corpus]},
                        **bearer(registry["member_key"]))

    assert refused.status_code == status, refused.content
    assert words in refused.content.decode()
    assert TrainingRun.objects.count() == before


def test_the_train_command_takes_name_colon_weight(registry, other, capsys):
    call_command("train", "--corpus", "prose", "--corpus", "xx:3", "--tokenizer", "w",
                 "--vocab-size", "300")

    run = TrainingRun.objects.filter(tokenizer__name="w").get()
    assert run.corpus_weights == {"xx": 3}
    assert sorted(run.corpora.values_list("name", flat=True)) == ["prose", "xx"]


@pytest.mark.parametrize("argument, words", [
    ("xx:two", "--corpus xx:two: the weight after ':' is a whole number from 1 to 100, not 'two'"),
    ("xx:0", "corpus 'xx': a corpus weight is a whole number from 1 to 100, not 0"),
    ("xx:101", "not 101"),
])
def test_the_train_command_refuses_bad_weights_in_words(registry, other, argument, words):
    before = TrainingRun.objects.count()
    with pytest.raises(CommandError) as refused:
        call_command("train", "--corpus", "prose", "--corpus", argument, "--tokenizer", "w",
                     "--vocab-size", "300")
    assert words in str(refused.value)
    assert TrainingRun.objects.count() == before


def test_an_extension_run_refuses_weighted_corpora_in_words(client, registry, other):
    before = TrainingRun.objects.count()
    refused = post_json(client, "/api/runs", {
        "extends": registry["small"].label, "vocab_size": 340,
        "corpora": [{"name": "xx", "weight": 2}]}, **bearer(registry["staff_key"]))

    assert refused.status_code == 400, refused.content
    assert "an extension run takes its corpora without weights" in refused.json()["detail"]
    assert TrainingRun.objects.count() == before
