"""Migrations keep the rows a database made by the old code holds: each test migrates back to
the schema before the change, writes a row as the old code did, and migrates forward again."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

APP = "tokenizers_app"


def migrate(*targets: tuple[str, str]):
    """Migrate to ``targets`` and answer the models as they are there."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(list(targets))
    return MigrationExecutor(connection).loader.project_state(list(targets)).apps


def latest() -> tuple[str, str]:
    [leaf] = [node for node in MigrationExecutor(connection).loader.graph.leaf_nodes()
              if node[0] == APP]
    return leaf


@pytest.mark.django_db(transaction=True)
def test_a_corpus_keeps_its_stored_name_as_a_plain_object_name():
    """``Corpus.file`` (a ``FileField``) became ``object_name`` (a ``CharField``): a corpus
    stored before the change names the same object after it."""
    newest = latest()
    old = migrate((APP, "0018_evaluation_parts"))
    try:
        name = "corpora/" + "ab" * 32 + ".txt"
        old.get_model(APP, "Corpus").objects.create(
            name="prose", original_filename="prose.txt", file=name, size_bytes=12,
            sha256="ab" * 32, line_count=1, char_count=12)

        new = migrate((APP, "0020_corpus_object_name"))

        corpus = new.get_model(APP, "Corpus").objects.get(name="prose")
        assert corpus.object_name == name
        assert not hasattr(corpus, "file")
    finally:
        migrate(newest)
    from tokenizers_app.models import Corpus

    assert Corpus.objects.get(name="prose").object_name == name
