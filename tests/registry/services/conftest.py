"""The workflow tests (``tokenizers_app.services``): what they share, and how they run.

The workflows are called in this process; the tests with real worker processes are in
tests/registry/test_tasks.py. A workflow sends its tasks with ``services.queue.send_on_commit``,
which registers the sending with Django's ``transaction.on_commit``. These tests run inside a
transaction that never commits, so nothing is sent: where a test needs to see what would be
enqueued it captures the on-commit callbacks with pytest-django's
``django_capture_on_commit_callbacks`` (which runs them only when asked, ``execute=True``).

Fixtures: a media folder per test, a corpus, a staff user and a member.
"""

import pytest


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    """A media folder per test, so that a test sees only its own files."""
    settings.MEDIA_ROOT = str(tmp_path / "media")


@pytest.fixture
def corpus():
    from tests.registry.helpers import (  # (models: once Django is set up)
        import_text,
        sample_text,
    )

    return import_text(sample_text(20_000), "prose")


@pytest.fixture
def staff(django_user_model):
    return django_user_model.objects.create_user("staff", is_staff=True)


@pytest.fixture
def member(django_user_model):
    return django_user_model.objects.create_user("member")
