"""``manage.py alias NAME@REF ALIAS --user STAFF``"""

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.core.management.base import BaseCommand, CommandError

from tokenizers_app.models import TokenizerVersion
from tokenizers_app.services.staff import move_alias


class Command(BaseCommand):
    help = "Point an alias (e.g. production) at a version; the move is recorded under a staff user."

    def add_arguments(self, parser):
        parser.add_argument("ref", help="the version, NAME@NUMBER or NAME@ALIAS")
        parser.add_argument("alias", help="e.g. production or candidate")
        parser.add_argument("--user", required=True, help="the staff user making the move")

    def handle(self, *args, ref, alias, user, **options):
        found = get_user_model().objects.filter(username=user).first()
        if found is None:
            raise CommandError(f"no user named {user!r}")
        try:
            moved = move_alias(version=TokenizerVersion.objects.resolve(ref), name=alias,
                               user=found)
        except (ValueError, PermissionDenied) as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"{moved.tokenizer.name}@{moved.name} -> version {moved.version.number}")
