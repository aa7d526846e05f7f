"""``manage.py reap_runs [--stale-seconds S]``"""

from django.conf import settings
from django.core.management.base import BaseCommand

from tokenizers_app.services.evaluations import reap_evaluations
from tokenizers_app.services.runs import reap_runs


class Command(BaseCommand):
    help = ("Re-queue runs whose worker stopped sending heartbeats (or fail them after "
            "RUN_MAX_ATTEMPTS attempts), running evaluations whose heartbeat is older than "
            "EVALUATION_STALE_SECONDS, and evaluations queued for longer than "
            "EVALUATION_RESEND_SECONDS (their task may be lost). Celery beat runs this every "
            "minute.")

    def add_arguments(self, parser):
        parser.add_argument("--stale-seconds", type=int, default=settings.RUN_STALE_SECONDS,
                            help="heartbeat age that counts as stale (default: %(default)s)")

    def handle(self, *args, stale_seconds, **options):
        outcome = reap_runs(stale_seconds=stale_seconds)
        for what, run_ids in outcome.items():
            if run_ids:
                self.stdout.write(f"{what}: runs {', '.join(map(str, run_ids))}")
        if not any(outcome.values()):
            self.stdout.write("no stale runs")
        evaluations = reap_evaluations()
        if evaluations:
            self.stdout.write(f"sent again: evaluations {', '.join(map(str, evaluations))}")
