"""Fixtures of the workflow tests: a media folder per test, a corpus, a staff user and a member."""

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
