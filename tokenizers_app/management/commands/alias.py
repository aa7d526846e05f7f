"""``manage.py alias NAME@REF ALIAS --user STAFF [--force-reason TEXT]``: a gated alias refuses
a move that fails its checks, naming each, unless a reason forces it (recorded)."""

from django.core.management.base import BaseCommand

from tokenizers_app.management.errors import refusals_as_command_errors
from tokenizers_app.management.users import user_named
from tokenizers_app.models import TokenizerVersion
from tokenizers_app.services.staff import move_alias


class Command(BaseCommand):
    help = "Point an alias (e.g. production) at a version; the move is recorded under a staff user."

    def add_arguments(self, parser):
        parser.add_argument("ref", help="the version, NAME@NUMBER or NAME@ALIAS")
        parser.add_argument("alias", help="e.g. production or candidate")
        parser.add_argument("--user", required=True, help="the staff user making the move")
        parser.add_argument("--force-reason", default="",
                            help="move past a gate that refuses it; the reason is recorded")

    def handle(self, *args, ref, alias, user, **options):
        found = user_named(user)
        with refusals_as_command_errors():
            moved = move_alias(version=TokenizerVersion.objects.resolve(ref), name=alias,
                               user=found, force_reason=options["force_reason"])
        last = moved.moves.order_by("-moved_at", "-id").first()
        forced = f" (forced past the gate: {last.forced_reason})" if last.forced_reason else ""
        self.stdout.write(f"{moved.tokenizer.name}@{moved.name} -> version "
                          f"{moved.version.number}{forced}")
