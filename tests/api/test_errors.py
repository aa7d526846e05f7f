"""The API answers in JSON whatever goes wrong before an operation runs: a body over Django's own
limits is a 413 in words, and an address that names no operation a 404."""

import io
import json

import pytest

from tests.api.conftest import bearer

pytestmark = pytest.mark.django_db

ENCODE = "/api/tokenizers/prose-bpe/versions/1/encode"


def test_an_encode_body_over_the_body_limit_is_a_json_413_in_words(client, registry, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 50_000
    body = json.dumps({"text": "a" * 60_000})
    answer = client.post(ENCODE, body, content_type="application/json")
    assert answer.status_code == 413 and answer["Content-Type"].startswith("application/json")
    assert "over 50000 bytes (setting DATA_UPLOAD_MAX_MEMORY_SIZE" in answer.json()["detail"]
    under = client.post(ENCODE, json.dumps({"text": "a" * 40_000}),
                        content_type="application/json")
    assert under.status_code == 200


@pytest.mark.parametrize("setting, fields, words", [
    ("DATA_UPLOAD_MAX_MEMORY_SIZE", {"name": "n" * 20_000}, "DATA_UPLOAD_MAX_MEMORY_SIZE"),
    ("DATA_UPLOAD_MAX_NUMBER_FIELDS", {f"f{i}": "x" for i in range(30)},
     "more than 10 fields"),
], ids=["a field too long", "too many fields"])
def test_an_upload_form_over_django_limits_is_a_json_413(client, registry, settings, setting,
                                                         fields, words):
    setattr(settings, setting, 10_000 if setting.endswith("SIZE") else 10)
    corpus = io.BytesIO(b"some text\n")
    corpus.name = "c.txt"
    answer = client.post("/api/corpora", {"name": "web", **fields, "file": corpus},
                         **bearer(registry["member_key"]))
    assert answer.status_code == 413, answer.content
    assert words in answer.json()["detail"]


@pytest.mark.parametrize("method, path", [
    ("get", "/api/nothing"), ("get", "/api/tokenizers/prose-bpe/versions/1/nothing"),
    ("post", "/api/nothing"), ("get", "/api/"), ("delete", "/api/corpora/prose/file"),
])
def test_an_address_that_names_no_operation_is_a_json_404(client, registry, method, path):
    answer = getattr(client, method)(path)
    assert answer.status_code == 404 and answer["Content-Type"].startswith("application/json")
    assert answer.json()["detail"].startswith(f"no operation of the API is at {path}")


def test_pages_still_get_the_page_not_found(client, registry):
    answer = client.get("/nothing/")
    assert answer.status_code == 404 and not answer["Content-Type"].startswith("application/json")
