"""``manage.py lifecycle NAME@REF published|deprecated|draft --user STAFF``"""

from django.core.management.base import BaseCommand

from tokenizers_app.management.errors import refusals_as_command_errors
from tokenizers_app.management.users import user_named
from tokenizers_app.models import TokenizerVersion
from tokenizers_app.services.staff import set_version_lifecycle


class Command(BaseCommand):
    help = "Publish or deprecate a version (or return it to draft), as a staff user."

    def add_arguments(self, parser):
        parser.add_argument("ref")
        parser.add_argument("lifecycle", choices=TokenizerVersion.Lifecycle.values)
        parser.add_argument("--user", required=True)

    def handle(self, *args, ref, lifecycle, user, **options):
        found = user_named(user)
        with refusals_as_command_errors():
            version = set_version_lifecycle(version=TokenizerVersion.objects.resolve(ref),
                                            lifecycle=lifecycle, user=found)
        self.stdout.write(f"{version.label}: {version.lifecycle}")
