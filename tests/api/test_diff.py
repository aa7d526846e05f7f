"""``GET /api/diff``: the verdict between two versions, and a corpus encoded by both."""

import pytest

from tests.api.conftest import bearer
from tests.bpe.corpora import CHINESE, JAPANESE
from tests.registry.helpers import import_text
from tokenizers_app.models import TokenizerVersion
from tokenizers_app.services.extensions import start_extension_run
from tokenizers_app.services.runs import execute_training_run

pytestmark = pytest.mark.django_db


@pytest.fixture
def child(registry):
    import_text((CHINESE + "\n" + JAPANESE + "\n") * 20, "cjk")
    run = start_extension_run(extends="prose-bpe@1", corpora=["cjk"], vocab_size=340,
                              created_by=registry["staff"])
    execute_training_run(run_id=run.pk)
    return run.versions.get()


def test_an_extension_is_reported_as_extends_with_its_new_ids(client, registry, child):
    key = bearer(registry["member_key"])
    found = client.get(f"/api/diff?from=prose-bpe@1&to={child.label}&corpus=prose", **key).json()
    assert found["verdict"] == "extends" and found["keeps_ids"]
    assert found["new_ids"] == [300, 339] and found["added_count"] == 40
    assert found["changed_count"] == 0 and found["removed_count"] == 0
    assert found["merges_added"] == 40
    corpus = found["corpus"]
    assert corpus["unchanged_share"] == 1.0  # English prose: the new CJK merges never touch it
    assert corpus["tokens_before"] == corpus["tokens_after"] > 0
    cjk = client.get(f"/api/diff?from=prose-bpe@1&to={child.label}&corpus=cjk", **key).json()
    assert cjk["corpus"]["unchanged_share"] < 1.0
    assert cjk["corpus"]["tokens_after"] < cjk["corpus"]["tokens_before"]
    assert set(cjk["corpus"]["scripts"]) <= {"Han", "Hiragana/Katakana", "none", "other"}


def test_the_same_version_is_identical(client, registry):
    found = client.get("/api/diff?from=prose-bpe@1&to=prose-bpe@1",
                       **bearer(registry["member_key"])).json()
    assert found["verdict"] == "identical" and found["added_count"] == 0


def test_two_trainings_are_incompatible_with_the_changed_ids_listed_and_searchable(client,
                                                                                   registry):
    key = bearer(registry["member_key"])
    found = client.get("/api/diff?from=prose-bpe@2&to=prose-bpe@1", **key).json()
    # @1 is the first 300 tokens of the same merges: ids above 299 are gone
    assert found["verdict"] == "incompatible" and found["changed_count"] == 300
    assert all(row["to"] is None for row in found["changed"])
    searched = client.get("/api/diff?from=prose-bpe@2&to=prose-bpe@1&search=the", **key).json()
    assert searched["changed"] and all("the" in row["from"] for row in searched["changed"])
    metrics = client.get("/api/diff?from=prose-bpe@1&to=prose-bpe@2&corpus=held-out",
                         **key).json()["corpus"]["metrics"]
    ratio = next(m for m in metrics if m["name"] == "compression_ratio")
    assert ratio["to"] > ratio["from"] and ratio["change"] == pytest.approx(ratio["to"] - ratio["from"])


def test_an_unknown_version_is_a_404(client, registry):
    answer = client.get("/api/diff?from=prose-bpe@1&to=prose-bpe@9",
                        **bearer(registry["member_key"]))
    assert answer.status_code == 404


def test_the_same_ids_under_another_pattern_are_not_identical(client, registry):
    TokenizerVersion.objects.filter(pk=registry["large"].pk).update(pattern="gpt4")
    found = client.get("/api/diff?from=prose-bpe@1&to=prose-bpe@2",
                       **bearer(registry["member_key"])).json()
    assert found["verdict"] == "incompatible" and found["rules_changed"]
    assert found["changed_count"] == 0 and not found["keeps_ids"]
