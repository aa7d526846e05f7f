"""The folders that the embedded defaults write to: the SQLite file's folder and the folder
broker's folders. Settings only name them; the entry points (``manage.py``, WSGI/ASGI, a Celery
worker or beat) create them before first use, so importing the settings writes nothing."""

import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
BROKER_FOLDERS = ("data_folder_in", "data_folder_out", "control_folder", "processed_folder")


def var_dir(environ=os.environ) -> Path:
    """The folder of everything this checkout writes by default: ``REGISTRY_VAR_DIR``, or
    ``var/`` in the checkout."""
    return Path(environ.get("REGISTRY_VAR_DIR", BASE_DIR / "var"))


def ensure_local_dirs() -> None:
    """Create the local folders the configured database and broker need (nothing for Postgres
    and Redis)."""
    from django.conf import settings

    database = settings.DATABASES["default"]
    if database["ENGINE"].endswith("sqlite3"):
        Path(database["NAME"]).parent.mkdir(parents=True, exist_ok=True)
    options = getattr(settings, "CELERY_BROKER_TRANSPORT_OPTIONS", {})
    if settings.CELERY_BROKER_URL.startswith("filesystem:"):
        for key in BROKER_FOLDERS:
            Path(options[key]).mkdir(parents=True, exist_ok=True)
