"""The health check (``views.health``): the database answers or not, saying no more."""

import pytest

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
