"""``manage.py import_parallel FILE --name NAME [--pivot en] [--user NAME]``"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from tokenizers_app.management.errors import refusals_as_command_errors
from tokenizers_app.management.users import acting_user, add_user_argument
from tokenizers_app.services.parallel import import_parallel_set


class Command(BaseCommand):
    help = ("Import a parallel set: a TSV whose header names the languages, a JSON Lines file "
            "of {\"en\": ..., \"de\": ...} objects, or a zip of gettext .po files (msgid is the "
            "pivot). Each language becomes an evaluation corpus NAME.LANGUAGE.")

    def add_arguments(self, parser):
        parser.add_argument("path", help="a .tsv, .jsonl or .zip file")
        parser.add_argument("--name", required=True, help="the set's name, e.g. flores-dev")
        parser.add_argument("--pivot", default="en", help="the pivot language (BCP 47): en")
        add_user_argument(parser)

    def handle(self, *args, path, name, pivot, user, **options):
        uploader = acting_user(user)
        try:
            data = Path(path).read_bytes()
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc.strerror}") from None
        with refusals_as_command_errors():
            created = import_parallel_set(data=data, name=name, pivot=pivot,
                                          original_filename=Path(path).name,
                                          uploaded_by=uploader)
        skipped = ", ".join(f"{n} {reason}" for reason, n in created.skipped.items()) or "none"
        self.stdout.write(f"parallel set {created.name!r}: {created.line_count} aligned lines in "
                          f"{created.members.count()} languages (pivot {created.pivot}); "
                          f"{created.dropped_lines} lines dropped (missing in some language); "
                          f"skipped while reading: {skipped}")
