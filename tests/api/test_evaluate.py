"""``POST /api/tokenizers/{name}/versions/{ref}/evaluate``: a version evaluated on request on an
evaluation corpus, once per (version, corpus)."""

import json

import pytest

from tests.api.conftest import bearer
from tokenizers_app.models import Evaluation

URL = "/api/tokenizers/prose-bpe/versions/1/evaluate"


def post(client, body, **extra):
    return client.post(URL, json.dumps(body), content_type="application/json", **extra)


def test_a_version_is_queued_on_an_evaluation_corpus_once(client, registry,
                                                          django_capture_on_commit_callbacks):
    registry["corpus"].mark_evaluation()
    key = bearer(registry["member_key"])
    with django_capture_on_commit_callbacks() as callbacks:
        first = post(client, {"corpus": "prose"}, **key)
        again = post(client, {"corpus": "prose"}, **key)
    assert first.status_code == again.status_code == 200, first.content
    assert first.json() == again.json() and first.json()["status"] == "queued"
    assert first.json()["corpus"] == "prose" and first.json()["metrics"] == {}
    assert len(callbacks) == 1  # one task: the second request finds the first evaluation
    assert Evaluation.objects.filter(corpus=registry["corpus"]).count() == 1


def test_an_evaluated_version_answers_its_numbers(client, registry):
    answer = post(client, {"corpus": "held-out"}, **bearer(registry["member_key"]))
    assert answer.status_code == 200 and answer.json()["status"] == "succeeded"
    stored = Evaluation.objects.get(version=registry["small"], corpus=registry["held_out"])
    assert answer.json()["metrics"]["compression_ratio"] == stored.metrics["compression_ratio"]


@pytest.mark.parametrize("body, status, words", [
    ({"corpus": "prose"}, 400, "'prose' is not an evaluation corpus"),
    ({"corpus": "nothing"}, 404, "no corpus named 'nothing'"),
])
def test_only_an_evaluation_corpus_is_evaluated_on(client, registry, body, status, words):
    answer = post(client, body, **bearer(registry["member_key"]))
    assert answer.status_code == status and words in answer.json()["detail"], answer.content
    assert not Evaluation.objects.filter(corpus=registry["corpus"]).exists()


def test_anonymous_callers_may_not_ask_for_an_evaluation(client, registry):
    registry["corpus"].mark_evaluation()
    assert post(client, {"corpus": "prose"}).status_code == 401
