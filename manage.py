#!/usr/bin/env python
"""Django's command-line utility: ``python manage.py start`` runs the whole application."""

import os
import sys


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "registry.settings")
    from registry.bare_checkout import debug_off_for_start, debug_on_a_bare_checkout
    from registry.local_dirs import var_dir

    if sys.argv[1:2] == ["start"]:
        os.environ.setdefault("HTTPS", "0")  # `start` serves plain http on this machine
        # a bare checkout's `start` serves people: the app's own error pages, DEBUG off
        debug_off_for_start(var_dir())
    # a machine with no environment (the README's commands): development, DEBUG on.
    # Deployments set SECRET_KEY (and DEBUG=0); gunicorn never asks for DEBUG.
    debug_on_a_bare_checkout()
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
