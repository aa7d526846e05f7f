"""The demo of ``manage.py start`` builds a parallel set from Django's own translations: every
language with at least 200 translated messages, English as the pivot."""

import io
from pathlib import Path
from unittest import mock

import django
import pytest

from tokenizers_app.bpe.po_files import read_po
from tokenizers_app.management.commands.start import Command
from tokenizers_app.models import ParallelSet

pytestmark = pytest.mark.django_db
LOCALE = Path(django.__file__).parent / "conf" / "locale"


def test_the_demo_loads_djangos_languages_with_200_messages_as_a_parallel_set(
        client, settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    command = Command(stdout=io.StringIO())
    with mock.patch("celery.app.task.Task.apply_async"):
        command.load_demo_languages()
    created = ParallelSet.objects.get(name="django-messages")
    expected = {path.parts[-3].replace("_", "-") for path in LOCALE.glob("*/LC_MESSAGES/django.po")
                if len(read_po(path.read_bytes()).messages) >= 200}
    languages = set(created.languages()) - {"en"}
    assert len(languages) == len(expected) > 80  # some headers name their language otherwise
    assert created.pivot == "en" and created.line_count > 100
    assert "Django's own messages in" in command.stdout.getvalue()
    page = client.get("/parallel/django-messages/").content.decode()
    assert f"{created.line_count} in every language" in page
    assert "django-messages" in client.get("/parallel/").content.decode()
