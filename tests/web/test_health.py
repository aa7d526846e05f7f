"""The minimal pages: the health check and the index."""

import pytest

from tokenizers_app.models import Tokenizer

pytestmark = pytest.mark.django_db


def test_health_reports_ok_and_the_database(client):
    response = client.get("/health")
    assert response.status_code == 200
    assert response.json()["status"] == "ok"


def test_health_says_the_database_is_down_without_saying_where(client, monkeypatch):
    from django.db import connection

    def refuse(*args, **kwargs):
        raise OSError("could not connect to server at db.internal:5432 as registry")

    monkeypatch.setattr(connection, "cursor", refuse)
    response = client.get("/health")
    assert response.status_code == 503
    assert response.json() == {"status": "error", "error": "the database does not answer"}


def test_the_index_lists_tokenizers_and_escapes_their_names(client):
    Tokenizer.objects.create(name="web-en-32k")
    Tokenizer.objects.create(name="<script>")

    page = client.get("/").content.decode()

    assert "web-en-32k" in page and "no ready version yet" in page
    assert "<script>" not in page and "&lt;script&gt;" in page
