"""Errors are routed by their class, never by their words (``tokenizers_app.errors``).

Every registry error is reworded here, each to a text of its own that shares no word with the
original. The API must still answer the same statuses (with the reworded text as its detail), the
forms must still show each error on the same field, the pages must answer the same statuses, and
the commands must end with the reworded message: nothing reads the message to decide."""

import errno
import io
import json
import os
import secrets

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from kombu.exceptions import OperationalError

from tokenizers_app.errors import RegistryError
from tokenizers_app.models import ApiKey, TokenizerVersion

pytestmark = pytest.mark.django_db
VERSION = "/api/tokenizers/prose-bpe/versions"


@pytest.fixture
def reworded(monkeypatch) -> list[str]:
    """Each registry error made from now on says ``reworded message N`` instead; returns the
    texts said, in order."""
    said: list[str] = []
    make = RegistryError.__init__

    def reword(self, message: str = "", *, field=None):
        said.append(f"reworded message {len(said) + 1}")
        make(self, said[-1], field=field)

    monkeypatch.setattr(RegistryError, "__init__", reword)
    return said


@pytest.fixture
def keys(registry_data) -> dict:
    return {role: {"HTTP_AUTHORIZATION": "Bearer " + ApiKey.objects.create_key(
        registry_data[role], role)[1]} for role in ("member", "staff")}


def post_json(client, url: str, body: dict, **extra):
    return client.generic("POST" if not url.startswith("PUT ") else "PUT",
                          url.removeprefix("PUT "), json.dumps(body),
                          content_type="application/json", **extra)


def upload(client, url: str, data: bytes, name: str, **extra):
    stream = io.BytesIO(data)
    stream.name = "corpus.txt"
    return client.post(url, {"name": name, "file": stream}, **extra)


def damage(registry_data) -> None:
    """Version 1's rows no longer give its recorded digest (a digest that no cache has seen)."""
    TokenizerVersion.objects.filter(pk=registry_data["small"].pk).update(
        digest=secrets.token_hex(32))


def queue_down(monkeypatch) -> None:
    def refuse(task, *args, on_failure=None):
        on_failure(OperationalError("[Errno 111] Connection refused"))

    monkeypatch.setattr("tokenizers_app.services.runs.send_on_commit", refuse)


def disk_full(monkeypatch) -> None:
    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)


RUN = {"tokenizer": "t", "corpora": ["prose"], "vocab_size": 300}
MEMBER, STAFF = "member", "staff"
API = {  # what is asked: (how, the status)
    "unknown tokenizer": (lambda c, k: c.get("/api/tokenizers/nothing"), 404),
    "unknown tokenizer's versions": (lambda c, k: c.get("/api/tokenizers/nothing/versions"),
                                     404),
    "unknown version number": (lambda c, k: c.get(f"{VERSION}/9"), 404),
    "unknown alias": (lambda c, k: c.get(f"{VERSION}/staging"), 404),
    "unknown corpus": (lambda c, k: c.get("/api/corpora/nothing"), 404),
    "a version twice": (lambda c, k: c.get("/api/compare", {
        "versions": "prose-bpe@1,prose-bpe@1", "corpus": "held-out"}), 400),
    "run on an unknown corpus": (lambda c, k: post_json(
        c, "/api/runs", {**RUN, "corpora": ["nope"]}, **k[MEMBER]), 404),
    "run on no corpus": (lambda c, k: post_json(
        c, "/api/runs", {**RUN, "corpora": []}, **k[MEMBER]), 400),
    "run with a bad tokenizer name": (lambda c, k: post_json(
        c, "/api/runs", {**RUN, "tokenizer": "a b"}, **k[MEMBER]), 400),
    "corpus name taken": (lambda c, k: upload(
        c, "/api/corpora", b"other bytes\n", "prose", **k[MEMBER]), 409),
    "corpus over the limit": (lambda c, k: upload(
        c, "/api/corpora", b"x" * 1001, "big", **k[MEMBER]), 413),
    "empty corpus": (lambda c, k: upload(c, "/api/corpora", b"", "empty", **k[MEMBER]), 400),
    "bad corpus name": (lambda c, k: upload(
        c, "/api/corpora", b"text\n", "a b", **k[MEMBER]), 400),
    "member moves an alias": (lambda c, k: post_json(
        c, "PUT /api/tokenizers/prose-bpe/aliases/production", {"version": 1}, **k[MEMBER]),
        403),
    "bad alias name": (lambda c, k: post_json(
        c, "PUT /api/tokenizers/prose-bpe/aliases/Prod", {"version": 1}, **k[STAFF]), 400),
    "text over the limit": (lambda c, k: post_json(
        c, f"{VERSION}/1/encode", {"text": "a" * 1001}), 413),
    "lone surrogate": (lambda c, k: post_json(c, f"{VERSION}/1/encode", {"text": "a\ud800"}),
                       400),
}


@pytest.mark.parametrize("ask, status", list(API.values()), ids=list(API))
def test_the_api_answers_the_status_of_the_class_whatever_the_words(
        client, registry_data, keys, settings, reworded, ask, status):
    settings.CORPUS_MAX_BYTES = 1000
    settings.API_ENCODE_MAX_CHARS = 1000
    answer = ask(client, keys)
    assert answer.status_code == status, answer.content
    assert answer.json()["detail"] in reworded


@pytest.mark.parametrize("trouble, ask, status", [
    (lambda m, data: damage(data), lambda c: c.get(f"{VERSION}/1/download?format=hf"), 409),
    (lambda m, data: queue_down(m), lambda c: post_json(c, "/api/runs", RUN), 503),
    (lambda m, data: disk_full(m), lambda c: c.get(f"{VERSION}/1/download?format=gpt2"), 507),
], ids=["damaged version", "queue down", "disk full"])
def test_the_server_side_troubles_keep_their_status_whatever_the_words(
        client, registry_data, monkeypatch, reworded, trouble, ask, status):
    client.force_login(registry_data["member"])
    trouble(monkeypatch, registry_data)
    answer = ask(client)
    assert answer.status_code == status, answer.content
    assert answer.json()["detail"] in reworded


RUN_FORM = {"tokenizer": "web-bpe", "corpus": "prose", "pattern": "gpt2", "vocab_size": 400,
            "special_tokens": "", "min_frequency": 1, "sweep": ""}


@pytest.mark.parametrize("url, data, field, status", [
    ("/runs/new/", {**RUN_FORM, "tokenizer": "bad name"}, "tokenizer", 400),
    ("/corpora/upload/", {"name": "prose", "file": b"other bytes\n"}, "name", 409),
    ("/corpora/upload/", {"name": "a b", "file": b"text\n"}, "name", 400),
    ("/corpora/upload/", {"name": "big", "file": b"x" * 1001}, "__all__", 413),
    ("/corpora/upload/", {"name": "empty", "file": b""}, "__all__", 400),
])
def test_a_form_shows_the_error_on_the_field_of_the_class_whatever_the_words(
        client, registry_data, settings, reworded, url, data, field, status):
    settings.CORPUS_MAX_BYTES = 1000
    client.force_login(registry_data["member"])
    if "file" in data:
        data = {**data, "file": io.BytesIO(data["file"])}
        data["file"].name = "corpus.txt"
    answer = client.post(url, data)
    assert answer.status_code == status
    errors = answer.context["form"].errors
    assert [e for e in errors.get(field, []) if e in reworded], errors


@pytest.mark.parametrize("address, status", [
    ("/tokenizers/prose-bpe/9/", 404),
    ("/tokenizers/prose-bpe/staging/vocab/", 404),
    ("/tokenizers/prose-bpe/1/download/nope/", 404),
    ("/tokenizers/prose-bpe/1/download/hf/", 409),
])
def test_a_page_answers_the_status_of_the_class_whatever_the_words(
        client, registry_data, reworded, address, status):
    damage(registry_data)
    answer = client.get(address)
    assert answer.status_code == status
    assert reworded and reworded[-1] in answer.content.decode()


@pytest.mark.parametrize("command", [
    ["alias", "prose-bpe@1", "production", "--user", "member"],
    ["lifecycle", "prose-bpe@1", "published", "--user", "member"],
    ["versions", "nothing"],
    ["show", "prose-bpe@9"],
    ["compare", "prose-bpe@1", "prose-bpe@1", "--corpus", "held-out"],
    ["evaluate", "prose-bpe@1", "--corpus", "nothing"],
    ["export_tokenizer", "nothing@1", "--format", "hf", "--out", "/nonexistent/t.json"],
    ["train", "--corpus", "nope", "--tokenizer", "t", "--vocab-size", "300"],
])
def test_a_command_ends_with_the_message_whatever_the_words(registry_data, reworded, command):
    with pytest.raises(CommandError) as refused:
        call_command(*command, stdout=io.StringIO())
    assert str(refused.value) in reworded
