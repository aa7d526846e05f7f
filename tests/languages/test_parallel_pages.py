"""Uploading a parallel set on its page and in the API; the set's page before any version."""

import io

import pytest

from tests.languages.test_parallel_sets import django_po_zip
from tokenizers_app.models import ApiKey, ParallelSet

pytestmark = pytest.mark.django_db


@pytest.fixture
def member(settings, tmp_path, django_user_model):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    return django_user_model.objects.create_user("member", password="pw-member-1")


def upload(data: bytes, name: str):
    stream = io.BytesIO(data)
    stream.name = name
    return stream


def test_a_member_uploads_a_po_zip_and_reads_the_counts(client, member):
    client.force_login(member)
    response = client.post("/parallel/upload/", {"name": "django", "pivot": "en",
                                                 "file": upload(django_po_zip(), "po.zip")},
                           follow=True)
    page = response.content.decode()
    created = ParallelSet.objects.get()
    assert f"{created.line_count} aligned lines in 7 languages" in page
    assert f"{created.dropped_lines} lines missing in some language were dropped" in page
    assert f"{created.skipped['plural forms']} plural forms" in page
    assert "No version is evaluated on this set yet" in page
    assert 'href="/parallel/django/"' in client.get("/parallel/").content.decode()
    assert "of the parallel set django" in client.get("/corpora/django.de/").content.decode()


def test_a_bad_file_is_shown_on_its_field_and_nothing_is_stored(client, member):
    client.force_login(member)
    response = client.post("/parallel/upload/", {"name": "bad",
                                                 "file": upload(b"en\tde\nyes\n", "x.tsv")})
    assert response.status_code == 400
    assert "no line is present in every language (1 lines dropped)" in response.content.decode()
    assert not ParallelSet.objects.exists()


def test_an_anonymous_upload_is_sent_to_sign_in_unread(client, member):
    response = client.post("/parallel/upload/", {"name": "x",
                                                 "file": upload(b"en\tde\na\tb\n", "x.tsv")})
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert not ParallelSet.objects.exists()


def test_the_api_uploads_and_lists_a_set(client, member):
    key = ApiKey.objects.create_key(member, "ci")[1]
    auth = {"Authorization": f"Bearer {key}"}
    data = b'{"en": "Hello", "de": "Hallo"}\n{"en": "Bye"}\n{"en": "Yes", "de": "Ja"}\n'
    response = client.post("/api/parallel-sets", {"name": "tiny", "pivot": "en",
                                                  "file": upload(data, "t.jsonl")}, headers=auth)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["languages"] == ["en", "de"] and body["line_count"] == 2
    assert body["dropped_lines"] == 1 and body["corpora"]["de"] == "tiny.de"
    assert client.get("/api/parallel-sets").json()["items"][0]["name"] == "tiny"
    refused = client.post("/api/parallel-sets", {"name": "t2", "file": upload(b"{x\n", "b.jsonl")},
                          headers=auth)
    assert refused.status_code == 400 and "line 1: not JSON" in refused.json()["detail"]
    assert client.get("/api/parallel-sets/nope").status_code == 404


def test_an_oversized_upload_is_refused_unread(client, member, settings):
    settings.PARALLEL_MAX_BYTES = 10
    client.force_login(member)
    response = client.post("/parallel/upload/", {"name": "big",
                                                 "file": upload(b"x" * (2 << 20), "b.tsv")})
    assert response.status_code == 413
    assert "PARALLEL_MAX_BYTES" in response.content.decode()
