"""The Celery app.

Workers: ``celery -A registry worker``; the periodic reaper: ``celery -A registry beat``. Started
so on a bare checkout (no ``DEBUG``, no ``SECRET_KEY``), the command runs with ``DEBUG`` on, as
``manage.py`` does there (``registry.bare_checkout``); in a deployment nothing changes.
"""

import os

from celery import Celery
from celery.signals import beat_init, worker_init

from registry.bare_checkout import debug_on_a_bare_checkout, started_by_the_celery_command

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "registry.settings")
if started_by_the_celery_command():  # before anything reads the settings (they load lazily)
    debug_on_a_bare_checkout()

app = Celery("registry")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_init.connect
@beat_init.connect
def _create_local_dirs(**_):
    from registry.local_dirs import ensure_local_dirs

    ensure_local_dirs()
