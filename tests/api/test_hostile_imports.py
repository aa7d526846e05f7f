"""Untrusted tokenizer files: every hostile file of ``tests/hostile_files`` is refused at import in
words (4xx, JSON, naming the cause) and leaves no row; a library that aborts or panics while a
version is encoded (a version written before imports were checked) is a 422 in words, and the next
encode is served by a fresh child; the test process itself never runs the library."""

import io
import json
from unittest import mock

import pytest
from django.db import transaction

from tests.api.conftest import bearer
from tests.hostile_files import CAUSES, HOSTILE, multiplying_replace, catastrophic_split
from tokenizers_app.models import EngineFile, Tokenizer, TokenizerVersion


def upload(client, key, name: str, files: dict[str, bytes]):
    streams = []
    for file_name, data in files.items():
        streams.append(io.BytesIO(data))
        streams[-1].name = file_name
    return client.post(f"/api/tokenizers/{name}/import", {"files": streams}, **bearer(key))


def nothing_written():
    assert not Tokenizer.objects.filter(name__startswith="hostile").exists()
    assert not TokenizerVersion.objects.filter(tokenizer__name__startswith="hostile").exists()
    assert not EngineFile.objects.exists()


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_file_is_refused_in_words_and_leaves_no_row(client, registry, settings, name):
    settings.MAX_VOCAB_SIZE = 50_000
    response = upload(client, registry["member_key"], "hostile", HOSTILE[name]())
    assert 400 <= response.status_code < 500, response.content[:500]
    detail = response.json()["detail"]
    assert CAUSES[name] in detail, detail
    assert "Traceback" not in detail
    nothing_written()


def test_a_library_that_aborts_during_the_check_is_refused_naming_its_memory(
        client, registry, settings):
    """The growth check off: the multiplying normalizer runs, and its child dies of its memory
    limit (the library aborts on a failed allocation); the import says so, and nothing is
    kept."""
    settings.IMPORT_MAX_GROWTH = 1e12
    settings.IMPORT_CHECK_MEMORY_BYTES = 512 * 1024**2
    response = upload(client, registry["member_key"], "hostile", multiplying_replace())
    assert response.status_code == 422, response.content[:500]
    assert "needed more than the 512 MB of memory it may use" in response.json()["detail"]
    nothing_written()


def planted(name: str, files: dict[str, bytes]) -> TokenizerVersion:
    """A version written without the import's checks (as one imported before they existed)."""
    from tokenizers_app.engines.hf import HFEngine
    from tokenizers_app.services.versions import add_version

    with mock.patch("celery.app.task.Task.apply_async"), transaction.atomic():
        return add_version(tokenizer=Tokenizer.objects.create(name=name),
                           core=HFEngine(files["tokenizer.json"]),
                           source=TokenizerVersion.Source.IMPORT)


def encode(client, name: str, text: str):
    return client.post(f"/api/tokenizers/{name}/versions/1/encode", {"text": text},
                       content_type="application/json")


def test_an_abort_or_a_panic_while_encoding_is_a_422_in_words_and_the_next_encode_works(
        client, registry, settings):
    settings.ENGINE_MEMORY_BYTES = 512 * 1024**2
    planted("grows", multiplying_replace())
    planted("panics", catastrophic_split())
    died = encode(client, "grows", "a" * 1000)  # anonymous
    assert died.status_code == 422, died.content
    assert "needed more than the 512 MB of memory it may use" in died.json()["detail"]
    panicked = encode(client, "panics", "x" * 30)
    assert panicked.status_code == 422, panicked.content
    assert "Onig: Regex search error" in panicked.json()["detail"]
    for name in ("grows", "panics"):  # a fresh child answers the next request
        fine = encode(client, name, "b")
        assert fine.status_code == 200, fine.content
        assert json.loads(fine.content)["ids"]


def test_the_playground_shows_the_library_failure_in_words(registry, settings):
    from django.test import Client

    settings.ENGINE_MEMORY_BYTES = 512 * 1024**2
    planted("grows", multiplying_replace())
    page = Client().post("/playground/", {"versions": "grows@1", "text": "a" * 1000})
    assert page.status_code == 422
    assert "needed more than the 512 MB of memory it may use" in page.content.decode()


def test_an_encode_that_overruns_its_wall_time_is_stopped_and_the_next_child_answers(
        client, registry, settings):
    from tests.engines.test_engines import KINDS
    from tokenizers_app.models.version_contents import _LOADED
    from tokenizers_app.services.versions import import_tokenizer

    with mock.patch("celery.app.task.Task.apply_async"):
        import_tokenizer(files=KINDS["bert-wordpiece"](), tokenizer_name="bert")
    _LOADED.clear()
    settings.ENGINE_WEB_SECONDS = 0.001  # no child answers this fast
    slow = encode(client, "bert", "many words to encode " * 5000)
    assert slow.status_code == 422, slow.content
    assert slow.json()["detail"] == ("the tokenizer's library took over 0.001 s on this request "
                                     "and was stopped")
    _LOADED.clear()
    settings.ENGINE_WEB_SECONDS = 5
    assert encode(client, "bert", "many words").status_code == 200


def test_a_loaded_version_asks_the_current_pool_after_the_pool_is_replaced(
        client, registry, settings):
    from tests.engines.test_engines import KINDS
    from tokenizers_app.services.versions import import_tokenizer

    with mock.patch("celery.app.task.Task.apply_async"):
        import_tokenizer(files=KINDS["bert-wordpiece"](), tokenizer_name="bert")
    assert encode(client, "bert", "many words").status_code == 200  # loaded and kept
    settings.ENGINE_MEMORY_BYTES = 700 * 1024**2  # another pool; the old one's children stop
    assert encode(client, "bert", "many words").status_code == 200
