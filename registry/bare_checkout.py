"""How an entry point tells a bare checkout from a deployment (one rule, used by two entries).

A machine where neither ``DEBUG`` nor ``SECRET_KEY`` is set is a bare checkout: someone typing
the README's commands. The entry points a person types there, ``manage.py`` and the ``celery``
command (``celery -A registry worker`` or ``beat``), then turn ``DEBUG`` on, and the settings use
their development key. A deployment sets ``SECRET_KEY`` (the compose file refuses to start
without one), so the rule never fires there and ``DEBUG`` stays off; with ``DEBUG`` off the
settings refuse the development key, so it cannot reach a deployment. gunicorn's entry
(``registry.wsgi``) never applies the rule: without a key it refuses to start.
"""

import os
import sys


def debug_on_a_bare_checkout(environ=os.environ) -> bool:
    """Turn ``DEBUG`` on when the environment sets neither ``DEBUG`` nor ``SECRET_KEY``; say
    whether it did. ``{}`` -> ``{"DEBUG": "1"}``; ``{"SECRET_KEY": ...}`` stays as it is."""
    if "DEBUG" in environ or "SECRET_KEY" in environ:
        return False
    environ["DEBUG"] = "1"
    return True


def started_by_the_celery_command() -> bool:
    """Whether this process is the ``celery`` command (console script or ``python -m celery``),
    which loads the app named by ``-A`` before it reads any setting."""
    return "celery.bin.celery" in sys.modules
