"""ASGI entry point."""

import os

from django.core.asgi import get_asgi_application

from registry.local_dirs import ensure_local_dirs

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "registry.settings")
ensure_local_dirs()

application = get_asgi_application()
