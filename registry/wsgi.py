"""WSGI entry point: ``gunicorn registry.wsgi``."""

import os

from django.core.wsgi import get_wsgi_application

from registry.local_dirs import ensure_local_dirs

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "registry.settings")
ensure_local_dirs()

application = get_wsgi_application()
