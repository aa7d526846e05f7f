#!/usr/bin/env python
"""Django's command-line utility: ``python manage.py start`` runs the whole application."""

import os
import sys


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "registry.settings")
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    from registry.local_dirs import ensure_local_dirs

    try:
        ensure_local_dirs()
    except ImproperlyConfigured as exc:
        sys.exit(f"error: {exc}")
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
