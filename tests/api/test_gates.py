"""Goldens and alias gates over HTTP: a gated move that changes ids, breaks a golden or loses
on a metric is a 409 naming each failed check; staff force it with a reason, recorded."""

import json

import pytest

from tests.api.conftest import bearer
from tests.bpe.corpora import CHINESE
from tests.registry.helpers import import_text
from tokenizers_app.models import AliasMove, Evaluation
from tokenizers_app.services.evaluations import run_evaluation
from tokenizers_app.services.extensions import start_extension_run
from tokenizers_app.services.runs import execute_training_run

pytestmark = pytest.mark.django_db


def put_json(client, url, body, **extra):
    return client.put(url, json.dumps(body), content_type="application/json", **extra)


def post_json(client, url, body, **extra):
    return client.post(url, json.dumps(body), content_type="application/json", **extra)


@pytest.fixture
def gated(client, registry):
    """production -> prose-bpe@2 (600 tokens), gated with a 1% tolerance; a golden pinned."""
    staff = bearer(registry["staff_key"])
    assert put_json(client, "/api/tokenizers/prose-bpe/aliases/production", {"version": 2},
                    **staff).status_code == 200
    gate = put_json(client, "/api/tokenizers/prose-bpe/aliases/production/gate",
                    {"tolerance": 0.01}, **staff)
    assert gate.status_code == 200 and gate.json()["gate_tolerance"] == 0.01
    golden = post_json(client, "/api/tokenizers/prose-bpe/goldens",
                       {"version": 2, "text": "The quick brown fox"}, **staff)
    assert golden.status_code == 201 and golden.json()["pinned_from"] == "prose-bpe@2"
    return staff


def test_a_move_that_changes_ids_is_refused_naming_each_check_then_forced(client, registry,
                                                                         gated):
    refused = put_json(client, "/api/tokenizers/prose-bpe/aliases/production", {"version": 1},
                       **gated)
    assert refused.status_code == 409
    detail = refused.json()["detail"]
    assert "ids: prose-bpe@1 incompatible prose-bpe@2: 300 ids of prose-bpe@2" in detail
    assert "goldens: 1 golden broken: 'The quick brown fox'" in detail
    assert "metrics: Compression ratio on held-out" in detail
    forced = put_json(client, "/api/tokenizers/prose-bpe/aliases/production",
                      {"version": 1, "force_reason": "roll back: v2 broke the demo"}, **gated)
    assert forced.status_code == 200 and forced.json()["version"] == 1
    assert forced.json()["forced_reason"] == "roll back: v2 broke the demo"
    move = AliasMove.objects.filter(alias__name="production").first()
    assert move.forced_reason == "roll back: v2 broke the demo"
    assert [c["name"] for c in move.gate_checks if not c["passed"]] == ["ids", "goldens",
                                                                        "metrics"]


def test_an_extension_that_keeps_goldens_and_metrics_passes_the_gate(client, registry, gated):
    import_text((CHINESE + "\n") * 30, "cjk")
    run = start_extension_run(extends="prose-bpe@2", corpora=["cjk"], vocab_size=640,
                              created_by=registry["staff"])
    execute_training_run(run_id=run.pk)
    child = run.versions.get()
    early = put_json(client, "/api/tokenizers/prose-bpe/aliases/production",
                     {"version": child.number}, **gated)
    assert early.status_code == 409 and "is not evaluated on held-out yet" in early.json()["detail"]
    for evaluation in Evaluation.objects.filter(version=child):
        run_evaluation(evaluation_id=evaluation.pk)
    # a larger vocab uses a smaller share of itself on English: within a 10% tolerance
    put_json(client, "/api/tokenizers/prose-bpe/aliases/production/gate", {"tolerance": 0.1},
             **gated)
    goldens = client.get(f"/api/tokenizers/prose-bpe/versions/{child.number}/goldens",
                         **gated).json()
    assert [g["kept"] for g in goldens["goldens"]] == [True]
    moved = put_json(client, "/api/tokenizers/prose-bpe/aliases/production",
                     {"version": child.number}, **gated)
    assert moved.status_code == 200, moved.content
    assert all(check["passed"] for check in moved.json()["gate_checks"])
    assert moved.json()["forced_reason"] == ""


def test_only_staff_set_gates_and_a_bad_tolerance_is_refused(client, registry, gated):
    member = bearer(registry["member_key"])
    assert put_json(client, "/api/tokenizers/prose-bpe/aliases/production/gate",
                    {"tolerance": 0.5}, **member).status_code == 403
    bad = put_json(client, "/api/tokenizers/prose-bpe/aliases/production/gate",
                   {"tolerance": 3}, **gated)
    assert bad.status_code == 400 and "between 0 and 1" in bad.json()["detail"]
    lifted = put_json(client, "/api/tokenizers/prose-bpe/aliases/production/gate",
                      {"tolerance": None}, **gated)
    assert lifted.json()["gate_tolerance"] is None
    assert put_json(client, "/api/tokenizers/prose-bpe/aliases/production", {"version": 1},
                    **gated).status_code == 200
