"""Reading the registry over HTTP: tokenizers, versions with metrics and lineage, corpora,
runs, comparisons; lists in pages."""

import json

import pytest

from tests.api.conftest import bearer
from tokenizers_app.bpe.compiled import CORE_PATH
from tokenizers_app.models import Evaluation

pytestmark = pytest.mark.django_db


def test_the_schema_is_openapi_3_1_and_the_docs_load_without_a_cdn(client):
    schema = client.get("/api/openapi.json").json()
    assert schema["openapi"].startswith("3.1")
    assert "/api/tokenizers/{name}/versions/{ref}/download" in schema["paths"]
    docs = client.get("/api/docs").content.decode()
    assert "swagger-ui" in docs and "cdn.jsdelivr" not in docs


def test_tokenizers_and_versions_by_number_or_alias(client, registry):
    from tokenizers_app.services.staff import move_alias

    move_alias(version=registry["large"], name="production", user=registry["staff"])
    listing = client.get("/api/tokenizers").json()
    assert listing["count"] == 1 and listing["items"][0]["aliases"] == {"production": 2}
    version = client.get("/api/tokenizers/prose-bpe/versions/production").json()
    evaluation = Evaluation.objects.get(version=registry["large"])
    assert version["number"] == 2 and version["digest"] == registry["large"].digest
    assert version["metrics"]["held-out"]["metrics"] == evaluation.metrics
    assert version["metrics"]["held-out"]["corpus_sha256"] == registry["held_out"].sha256
    run = version["lineage"]["training_run"]
    assert run["corpora"][0]["sha256"] == registry["corpus"].sha256 and run["vocab_size"] == 600
    assert client.get("/api/tokenizers/prose-bpe/versions").json()["count"] == 2


def test_lists_come_in_pages_of_at_most_a_hundred(client, registry):
    page = client.get("/api/tokenizers/prose-bpe/versions?page=2&page_size=1").json()
    assert (page["count"], page["page"], len(page["items"])) == (2, 2, 1)
    assert page["items"][0]["number"] == 1
    assert client.get("/api/corpora?page_size=101").status_code == 422


@pytest.mark.parametrize("url, message", [
    ("/api/tokenizers/nothing", "no tokenizer named 'nothing'"),
    ("/api/tokenizers/prose-bpe/versions/9", "has no version 9 (versions: 1, 2)"),
    ("/api/tokenizers/prose-bpe/versions/staging", "has no alias 'staging'"),
    ("/api/corpora/nothing", "no corpus named 'nothing'"),
    ("/api/runs/999999", "No TrainingRun matches")])
def test_unknown_names_are_404_with_a_reason(client, registry, url, message):
    response = client.get(url)
    assert response.status_code == 404 and message in response.json()["detail"]


def test_a_ref_that_is_neither_a_number_nor_an_alias_is_a_400_in_words(client, registry):
    response = client.get("/api/tokenizers/prose-bpe/versions/%C2%B2")  # "²"
    assert response.status_code == 400
    assert response.json()["detail"].startswith("'²' is not a version number or an alias")


def test_corpora_runs_and_comparisons(client, registry):
    corpus = client.get("/api/corpora/prose").json()
    assert corpus["sha256"] == registry["corpus"].sha256 and corpus["line_count"] > 0
    run = client.get(f"/api/runs/{registry['runs'][0].pk}").json()
    assert run["status"] == "succeeded" and run["merges_per_second"] > 0
    assert run["core_path"] == CORE_PATH  # which BPE core ran it
    comparison = client.get("/api/compare", {"versions": "prose-bpe@1,prose-bpe@2",
                                             "corpus": "held-out"}).json()
    ratios = [v["metrics"]["compression_ratio"] for v in comparison["versions"]]
    assert ratios == [Evaluation.objects.get(version=v).metrics["compression_ratio"]
                      for v in (registry["small"], registry["large"])]
    assert comparison["metrics"]["compression_ratio"]["unit"] == "bytes/token"


def test_the_comparison_marks_the_best_versions_and_is_the_commands_json(client, registry):
    from io import StringIO

    from django.core.management import call_command

    comparison = client.get("/api/compare", {"versions": "prose-bpe@1,prose-bpe@2",
                                             "corpus": "held-out"}).json()
    metrics = comparison["metrics"]
    assert metrics["compression_ratio"]["best"] == ["prose-bpe@2"]  # more bytes per token
    assert metrics["tokens_per_word"]["best"] == ["prose-bpe@2"]  # fewer tokens per word
    assert metrics["unknown_rate"]["best"] == []  # byte-level versions do not report it
    out = StringIO()
    call_command("compare", "prose-bpe@1", "prose-bpe@2", "--corpus", "held-out", "--json",
                 stdout=out)
    assert json.loads(out.getvalue()) == comparison


def test_a_comparison_is_on_an_evaluation_corpus_only(client, registry):
    response = client.get("/api/compare", {"versions": "prose-bpe@1,prose-bpe@2",
                                           "corpus": "prose"})
    assert response.status_code == 400
    assert "'prose' is not an evaluation corpus" in response.json()["detail"]
    assert client.get("/api/compare", {"versions": "prose-bpe@1",
                                       "corpus": "nothing"}).status_code == 404


def test_reads_can_require_a_key(client, registry, settings):
    settings.API_ANONYMOUS_READS = False
    assert client.get("/api/tokenizers").status_code == 401
    assert client.get("/api/tokenizers", **bearer(registry["member_key"])).status_code == 200


def test_a_nul_byte_in_the_address_or_a_name_is_refused_not_a_server_error(client, registry):
    for url in ("/api/compare?versions=prose-bpe%00@1&corpus=held-out", "/api/tokenizers/a%00b",
                "/compare/?versions=prose-bpe%00@1&corpus=held-out"):
        response = client.get(url)
        assert response.status_code == 400 and b"NUL byte" in response.content, url
    refused = client.post("/api/runs", {"tokenizer": "t", "corpora": ["pro\x00se"],
                                        "vocab_size": 300}, content_type="application/json",
                          **bearer(registry["member_key"]))
    # SQLite looks the name up and finds nothing (404); Postgres cannot compare it (400)
    assert refused.status_code in (400, 404) and "detail" in refused.json()


def test_an_encode_by_alias_follows_the_alias_when_staff_move_it(client, registry):
    """The encode looks a version up by its digest alone and loads the rest of the row only
    when this process has not loaded it: each answer is still that of the alias's version of
    the moment, byte for byte."""
    from tokenizers_app.services.staff import move_alias

    url = "/api/tokenizers/prose-bpe/versions/production/encode"
    text = "Hello there, the registry encodes this. " * 20
    answers = []
    for version in (registry["small"], registry["large"], registry["small"]):
        move_alias(version=version, name="production", user=registry["staff"])
        response = client.post(url, json.dumps({"text": text}), content_type="application/json")
        assert response.status_code == 200
        expected = version.load_tokenizer().encoding_json(text)
        assert response.content.decode() == expected
        answers.append(response.content)
    assert answers[0] != answers[1] and answers[0] == answers[2]
