"""Minimal pages: a plain index of tokenizers and a health check (the dashboard comes later)."""

from django.db import connection
from django.http import HttpResponse, JsonResponse
from django.utils.html import format_html, format_html_join

from .models import Tokenizer, TrainingRun


def health(request):
    """``{"status": "ok", "database": "sqlite"}``, or 503 when the database does not answer."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as exc:  # any database error means "not healthy"
        return JsonResponse({"status": "error", "error": str(exc)}, status=503)
    return JsonResponse({"status": "ok", "database": connection.vendor})


def index(request):
    """Every tokenizer with its latest ready version, and the runs in progress."""
    rows = format_html_join("", "<li>{} <small>{}</small></li>", (
        (t.name, f"latest: v{v.number}, vocab {v.vocab_size}" if (v := t.latest_version())
         else "no ready version yet") for t in Tokenizer.objects.all()))
    active = TrainingRun.objects.exclude(status__in=TrainingRun.FINISHED)
    active = active.select_related("tokenizer")
    runs = format_html_join("", "<li>run {} for {}: {} {} {}/{}</li>", (
        (r.pk, r.tokenizer.name, r.status, r.stage, r.progress_done, r.progress_total)
        for r in active))
    return HttpResponse(format_html(
        "<!doctype html><title>Tokenizer Registry</title><h1>Tokenizer Registry</h1>"
        "<h2>Tokenizers</h2><ul>{}</ul><h2>Runs in progress</h2><ul>{}</ul>"
        '<p><a href="/admin/">Admin</a> (staff)</p>', rows or "none yet", runs or "none"))
