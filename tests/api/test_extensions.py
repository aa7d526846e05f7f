"""Extension runs over HTTP: ``POST /api/runs`` with ``extends`` makes a new version of the same
tokenizer whose lineage names its parent and which keeps every parent id."""

import json

import pytest

from tests.api.conftest import bearer
from tests.bpe.corpora import CHINESE, JAPANESE
from tests.registry.helpers import import_text
from tokenizers_app.models import TokenizerVersion, TrainingRun
from tokenizers_app.services.runs import execute_training_run

pytestmark = pytest.mark.django_db


def post_json(client, url, body, **extra):
    return client.post(url, json.dumps(body), content_type="application/json", **extra)


@pytest.fixture
def cjk(registry):
    return import_text((CHINESE + JAPANESE) * 20, "cjk")


def test_an_extension_run_makes_a_version_that_keeps_every_parent_id(client, registry, cjk):
    parent = registry["small"]  # prose-bpe@1, 300 tokens; owned by no one: staff adds to it
    key = bearer(registry["staff_key"])
    answer = post_json(client, "/api/runs", {"extends": parent.label, "corpora": ["cjk"],
                                             "vocab_size": 340, "sweep": [320]}, **key)
    assert answer.status_code == 201, answer.content
    run = answer.json()
    assert run["extends"] == parent.label and run["tokenizer"] == "prose-bpe"
    assert run["pattern"] == parent.pattern and run["special_tokens"] == parent.special_tokens
    execute_training_run(run_id=run["id"])
    done = client.get(f"/api/runs/{run['id']}", **key).json()
    assert done["status"] == "succeeded", done["error"]
    assert len(done["versions"]) == 2  # the sweep's 320 and the full 340
    child = TokenizerVersion.objects.resolve(done["versions"][-1])
    assert child.tokenizer_id == parent.tokenizer_id and child.vocab_size == 340
    assert child.lineage()["extends"] == parent.label
    parent_core, child_core = parent.load_tokenizer(), child.load_tokenizer()
    assert all(child_core.vocab[i] == t for i, t in parent_core.vocab.items())
    assert sorted(set(child_core.vocab) - set(parent_core.vocab)) == list(range(300, 340))
    assert child_core.merges[:len(parent_core.merges)] == parent_core.merges
    assert len(child_core.encode_ordinary(CHINESE)) < len(parent_core.encode_ordinary(CHINESE))
    page = client.get(f"/api/tokenizers/prose-bpe/versions/{child.number}", **key).json()
    assert page["lineage"]["extends"] == parent.label


@pytest.mark.parametrize("body, words", [
    ({"vocab_size": 300}, "must be above the 300 tokens of prose-bpe@1"),
    ({"vocab_size": 340, "pattern": "gpt4"}, "pattern is kept from the parent"),
    ({"vocab_size": 340, "algorithm": "char_bpe"}, "algorithm is kept from the parent"),
    ({"vocab_size": 340, "tokenizer": "other"}, "is a new version of 'prose-bpe'"),
    ({"vocab_size": 340, "sweep": [290]}, "sweep size 290 must be above"),
])
def test_bad_extension_runs_are_refused_in_words_and_leave_no_run(client, registry, cjk, body,
                                                                   words):
    before = TrainingRun.objects.count()
    answer = post_json(client, "/api/runs", {"extends": "prose-bpe@1", "corpora": ["cjk"],
                                             **body}, **bearer(registry["staff_key"]))
    assert answer.status_code == 400 and words in answer.json()["detail"]
    assert TrainingRun.objects.count() == before


def test_an_unknown_parent_is_a_404(client, registry, cjk):
    answer = post_json(client, "/api/runs", {"extends": "prose-bpe@9", "corpora": ["cjk"],
                                             "vocab_size": 400}, **bearer(registry["staff_key"]))
    assert answer.status_code == 404


def test_a_character_level_version_extends_and_a_unigram_like_kind_is_refused(client, registry,
                                                                              cjk):
    from tokenizers_app.services.runs import start_training_run

    staff = registry["staff"]
    run = start_training_run(corpora=["prose"], tokenizer_name="classic", vocab_size=150,
                             algorithm="char_bpe", created_by=staff)
    execute_training_run(run_id=run.pk)
    key = bearer(registry["staff_key"])
    swept = post_json(client, "/api/runs", {"extends": "classic@1", "corpora": ["cjk"],
                                            "vocab_size": 400, "sweep": [300]}, **key)
    assert swept.status_code == 400 and "sweep of a character-level extension" in \
        swept.json()["detail"]
    answer = post_json(client, "/api/runs", {"extends": "classic@1", "corpora": ["cjk"],
                                             "vocab_size": 400}, **key)
    assert answer.status_code == 201 and answer.json()["algorithm"] == "char_bpe"
    execute_training_run(run_id=answer.json()["id"])
    child = TokenizerVersion.objects.resolve("classic@2")
    parent_core, child_core = run.versions.get().load_tokenizer(), child.load_tokenizer()
    assert all(child_core.vocab[i] == t for i, t in parent_core.vocab.items())
    assert child_core.unk_id not in child_core.encode_ordinary(CHINESE)
    assert child.lineage()["extends"] == "classic@1"


def test_kinds_without_a_merge_order_to_continue_are_refused_in_words(client, registry, cjk):
    TokenizerVersion.objects.filter(pk=registry["small"].pk).update(algorithm="sentencepiece")
    answer = post_json(client, "/api/runs", {"extends": "prose-bpe@1", "corpora": ["cjk"],
                                             "vocab_size": 400}, **bearer(registry["staff_key"]))
    assert answer.status_code == 400
    assert "Unigram and WordPiece have no merge order to continue" in answer.json()["detail"]
