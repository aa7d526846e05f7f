"""``manage.py sweep [--min-age-seconds S]``"""

from django.conf import settings
from django.core.management.base import BaseCommand

from tokenizers_app.services.sweep import sweep_leftovers


class Command(BaseCommand):
    help = ("Remove what dead work left in the store (MEDIA_ROOT or the bucket): count files of "
            "fan-out attempts and evaluation part totals no merge will read, corpus files "
            "without a row, .part files of killed uploads and writes, downloads without their "
            "record, and (in a bucket) unfinished multipart uploads. Celery beat runs this "
            "every SWEEP_EVERY_SECONDS.")

    def add_arguments(self, parser):
        parser.add_argument("--min-age-seconds", type=int, default=settings.SWEEP_MIN_AGE_SECONDS,
                            help="leave younger files alone (default: %(default)s)")

    def handle(self, *args, min_age_seconds, **options):
        removed = sweep_leftovers(min_age_seconds=min_age_seconds)
        for what, paths in removed.items():
            for path in paths:
                self.stdout.write(f"removed {what}: {path}")
        if not any(removed.values()):
            self.stdout.write("nothing left behind")
