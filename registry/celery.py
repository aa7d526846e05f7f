"""The Celery app.

Workers: ``celery -A registry worker``; the periodic reaper: ``celery -A registry beat``.
"""

import os

from celery import Celery
from celery.signals import beat_init, worker_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "registry.settings")

app = Celery("registry")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_init.connect
@beat_init.connect
def _create_local_dirs(**_):
    from registry.local_dirs import ensure_local_dirs

    ensure_local_dirs()
