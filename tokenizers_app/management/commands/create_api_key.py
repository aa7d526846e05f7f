"""``manage.py create_api_key USER [--name N]``"""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from tokenizers_app.models import ApiKey


class Command(BaseCommand):
    help = "Create an API key for a user and print it, once (only its hash is stored)."

    def add_arguments(self, parser):
        parser.add_argument("user")
        parser.add_argument("--name", default="", help="what the key is for")

    def handle(self, *args, user, name, **options):
        found = get_user_model().objects.filter(username=user).first()
        if found is None:
            raise CommandError(f"no user named {user!r} (create one with createsuperuser)")
        record, key = ApiKey.objects.create_key(found, name)
        self.stderr.write(f"key {record.prefix}… for {found}: keep it now, it is not shown again")
        self.stdout.write(key)
