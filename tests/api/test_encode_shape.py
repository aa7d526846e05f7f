"""The encode answer's shape: real answers of every kind (byte-level and character-level BPE,
Hugging Face ``tokenizers``, sentencepiece) hold exactly what the OpenAPI document's
``EncodeOut`` says, and what the ``EncodeOut`` class reads back. The answer is joined by one
writer (``TokenTable.encoding_json``) rather than dumped from the class, so nothing else checks
it."""

import json

import jsonschema
import pytest

from tests.api.conftest import bearer
from tests.api.test_engine_imports import upload
from tests.engines.test_engines import KINDS, TEXTS
from tests.registry.helpers import train
from tokenizers_app.api.tokenizers import EncodeOut

pytestmark = pytest.mark.django_db

# special-token text allowed, so that special ids are in the answers too
BODIES = [{"text": text} for text in TEXTS.values()] + [
    {"text": "a<|endoftext|>b", "allowed_special": "all"}, {"text": ""}]


def encode_schema(client) -> dict:
    """The document's schema of the encode operation's 200 answer, its references resolved."""
    document = client.get("/api/openapi.json").json()
    operation = document["paths"]["/api/tokenizers/{name}/versions/{ref}/encode"]["post"]
    schema = operation["responses"]["200"]["content"]["application/json"]["schema"]
    return {**schema, "components": document["components"]}


def test_the_answers_of_every_kind_hold_the_documented_shape(client, registry):
    key = registry["member_key"]
    train(registry["corpus"], "classic", vocab_size=300, algorithm="char_bpe",
          special_tokens=["<unk>", "<|endoftext|>"])
    for kind in ("llama-bpe", "sentencepiece-bpe"):
        assert upload(client, key, kind, KINDS[kind]()).status_code == 201
    schema = encode_schema(client)
    validator = jsonschema.Draft202012Validator(schema)
    answered = 0
    for name in ("prose-bpe", "classic", "llama-bpe", "sentencepiece-bpe"):
        for body in BODIES:
            response = client.post(f"/api/tokenizers/{name}/versions/1/encode", json.dumps(body),
                                   content_type="application/json", **bearer(key))
            if response.status_code != 200:  # a kind without <|endoftext|> refuses it
                assert response.status_code == 400, response.content
                continue
            answer = json.loads(response.content)
            assert list(validator.iter_errors(answer)) == [], (name, body)
            assert list(answer) == list(EncodeOut.model_fields), (name, body)
            assert EncodeOut.model_validate_json(response.content).model_dump(
                mode="json") == answer
            assert len(answer["ids"]) == len(answer["tokens"]) == len(answer["spans"])
            answered += 1
    assert answered >= 4 * len(TEXTS) + 1


def test_the_check_finds_an_answer_out_of_shape(client, registry):
    validator = jsonschema.Draft202012Validator(encode_schema(client))
    assert not validator.is_valid({"ids": [1], "tokens": ["a"], "spans": [[0, 1, 2]]})
    assert not validator.is_valid({"ids": ["1"], "tokens": ["a"], "spans": [[0, 1]]})
    assert not validator.is_valid({"ids": [1], "tokens": ["a"]})
    assert validator.is_valid({"ids": [1], "tokens": ["a"], "spans": [[0, 1]]})
