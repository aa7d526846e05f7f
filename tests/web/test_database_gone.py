"""The database not answering (restarting, say) while a page or the API is asked: a 503 in
words, never a traceback or the database's address."""

import pytest

pytestmark = pytest.mark.django_db


def test_a_database_that_does_not_answer_is_a_503_in_words(client, registry_data, monkeypatch):
    """A page or the API while the database restarts: 503 saying so, no traceback, no host."""
    from django.db import OperationalError

    from tokenizers_app.models import Corpus as Corpora

    def gone(*args, **kwargs):
        raise OperationalError("server closed the connection unexpectedly (db.internal:5432)")

    monkeypatch.setattr(Corpora.objects, "by_names", gone)
    monkeypatch.setattr(Corpora.objects, "for_evaluation", gone)
    api = client.get("/api/corpora/prose")
    page = client.get("/compare/")
    assert (api.status_code, page.status_code) == (503, 503)
    assert api.json()["detail"].startswith("the database does not answer")
    assert page.content.decode().startswith("the database does not answer")
    assert b"db.internal" not in api.content + page.content
