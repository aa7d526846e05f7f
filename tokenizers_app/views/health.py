"""``/health``: whether the database answers."""

from django.db import connection
from django.http import JsonResponse


def health(request):
    """``{"status": "ok", "database": "sqlite"}``, or 503 when the database does not answer."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as exc:  # any database error means "not healthy"
        return JsonResponse({"status": "error", "error": str(exc)}, status=503)
    return JsonResponse({"status": "ok", "database": connection.vendor})
