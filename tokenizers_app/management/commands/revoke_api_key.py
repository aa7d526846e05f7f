"""``manage.py revoke_api_key PREFIX``"""

from django.core.management.base import BaseCommand, CommandError

from tokenizers_app.models import ApiKey


class Command(BaseCommand):
    help = "Revoke the API key whose first characters (its prefix, e.g. trk_AbCdEfGh) are given."

    def add_arguments(self, parser):
        parser.add_argument("prefix")

    def handle(self, *args, prefix, **options):
        keys = list(ApiKey.objects.filter(prefix__startswith=prefix[:12], revoked_at=None))
        if len(keys) != 1:
            raise CommandError(f"{len(keys)} active keys start with {prefix!r}: give one key's "
                               f"prefix")
        keys[0].revoke()
        self.stdout.write(f"revoked {keys[0]}")
