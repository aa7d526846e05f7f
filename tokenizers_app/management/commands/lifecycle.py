"""``manage.py lifecycle NAME@REF published|deprecated|draft --user STAFF``"""

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.core.management.base import BaseCommand, CommandError

from tokenizers_app.models import TokenizerVersion
from tokenizers_app.services.staff import set_version_lifecycle


class Command(BaseCommand):
    help = "Publish or deprecate a version (or return it to draft), as a staff user."

    def add_arguments(self, parser):
        parser.add_argument("ref")
        parser.add_argument("lifecycle", choices=TokenizerVersion.Lifecycle.values)
        parser.add_argument("--user", required=True)

    def handle(self, *args, ref, lifecycle, user, **options):
        found = get_user_model().objects.filter(username=user).first()
        if found is None:
            raise CommandError(f"no user named {user!r}")
        try:
            version = set_version_lifecycle(version=TokenizerVersion.objects.resolve(ref),
                                            lifecycle=lifecycle, user=found)
        except (ValueError, PermissionDenied) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"{version.label}: {version.lifecycle}")
