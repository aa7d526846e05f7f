"""``manage.py golden NAME@REF TEXT [--user NAME]``: pin a golden text with the ids the version
gives it; ``manage.py golden NAME@REF`` lists the goldens and whether the version keeps each."""

from django.core.management.base import BaseCommand

from tokenizers_app.management.errors import refusals_as_command_errors
from tokenizers_app.management.users import acting_user, add_user_argument
from tokenizers_app.models import TokenizerVersion
from tokenizers_app.services.gates import goldens_kept, pin_golden


class Command(BaseCommand):
    help = "Pin a golden text on a tokenizer, or list which goldens a version keeps."

    def add_arguments(self, parser):
        parser.add_argument("ref", help="NAME@REF")
        parser.add_argument("text", nargs="?", help="the text to pin (leave out to list)")
        add_user_argument(parser)

    def handle(self, *args, **options):
        with refusals_as_command_errors():
            version = TokenizerVersion.objects.select_related("tokenizer").resolve(
                options["ref"])
            if options["text"] is not None:
                golden = pin_golden(version=version, text=options["text"],
                                    user=acting_user(options["user"]))
                self.stdout.write(f"pinned golden {golden.pk} from {version.label}: "
                                  f"{len(golden.ids)} ids")
                return
            for golden, kept in goldens_kept(version):
                self.stdout.write(f"{'keeps' if kept else 'BREAKS'} golden {golden.pk} "
                                  f"(pinned from {golden.pinned_from.label}): {golden.text[:60]!r}")
