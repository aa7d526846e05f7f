"""How an entry point tells a bare checkout from a deployment (one rule, used by two entries).

A machine where neither ``DEBUG`` nor ``SECRET_KEY`` is set is a bare checkout: someone typing
the README's commands. The entry points a person types there, ``manage.py`` and the ``celery``
command (``celery -A registry worker`` or ``beat``), then turn ``DEBUG`` on, and the settings use
their development key. A deployment sets ``SECRET_KEY`` (the compose file refuses to start
without one), so the rule never fires there and ``DEBUG`` stays off; with ``DEBUG`` off the
settings refuse the development key, so it cannot reach a deployment. gunicorn's entry
(``registry.wsgi``) never applies the rule: without a key it refuses to start.

``manage.py start`` is the exception: it serves the whole application to a person, so on a bare
checkout it runs with ``DEBUG`` off (the app's own 404 and 500 pages, whitenoise serving the
collected static files) and a random key of this checkout's own, kept in ``var/secret-key``.
"""

import os
import secrets
import sys
from pathlib import Path


def debug_on_a_bare_checkout(environ=os.environ) -> bool:
    """Turn ``DEBUG`` on when the environment sets neither ``DEBUG`` nor ``SECRET_KEY``; say
    whether it did. ``{}`` -> ``{"DEBUG": "1"}``; ``{"SECRET_KEY": ...}`` stays as it is."""
    if "DEBUG" in environ or "SECRET_KEY" in environ:
        return False
    environ["DEBUG"] = "1"
    return True


def debug_off_for_start(var_dir: Path, environ=os.environ) -> bool:
    """On a bare checkout, run ``start`` with ``DEBUG`` off and this checkout's own key (made on
    the first start, kept in ``var_dir/secret-key``, readable by its owner only); say whether it
    did. ``{}`` -> ``{"DEBUG": "0", "SECRET_KEY": <50+ random characters>}``; an environment
    that sets ``DEBUG`` or ``SECRET_KEY`` stays as it is."""
    if "DEBUG" in environ or "SECRET_KEY" in environ:
        return False
    key_file = var_dir / "secret-key"
    if not key_file.is_file():
        var_dir.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as out:
            out.write(secrets.token_urlsafe(50))
    environ["DEBUG"], environ["SECRET_KEY"] = "0", key_file.read_text().strip()
    return True


def started_by_the_celery_command() -> bool:
    """Whether this process is the ``celery`` command (console script or ``python -m celery``),
    which loads the app named by ``-A`` before it reads any setting."""
    return "celery.bin.celery" in sys.modules
