"""``manage.py create_bucket``"""

from django.core.management.base import BaseCommand

from tokenizers_app.management.errors import refusals_as_command_errors
from tokenizers_app.storage import get_store


class Command(BaseCommand):
    help = ("Create the bucket of STORAGE_URL if it does not exist (with no STORAGE_URL: the "
            "MEDIA_ROOT folder). Safe to run at every start, as the compose file does.")
    requires_system_checks = []  # the storage check would refuse the missing bucket

    def handle(self, *args, **options):
        store = get_store()
        with refusals_as_command_errors():
            created = store.create()
        self.stdout.write(f"{store.describe()}: {'created' if created else 'ready'}")
