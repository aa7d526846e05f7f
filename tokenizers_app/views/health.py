"""``/health``: whether the database answers (never which database, where, or why not: the
reason goes to the log, not to whoever asks)."""

import logging

from django.db import connection
from django.http import JsonResponse

log = logging.getLogger(__name__)


def health(request):
    """``{"status": "ok", "database": "sqlite"}``, or 503 when the database does not answer."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception:  # any database error means "not healthy"
        log.exception("health check: the database does not answer")
        return JsonResponse({"status": "error", "error": "the database does not answer"},
                            status=503)
    return JsonResponse({"status": "ok", "database": connection.vendor})
