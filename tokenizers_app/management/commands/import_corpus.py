"""``manage.py import_corpus PATH --name NAME [--language TAG] [--evaluation] [--user NAME]``"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db import DatabaseError

from tokenizers_app.management.errors import refusals_as_command_errors
from tokenizers_app.management.users import acting_user, add_user_argument
from tokenizers_app.services.corpora import import_corpus


class Command(BaseCommand):
    help = ("Import a UTF-8 text file as a corpus. The same bytes imported twice are one corpus; "
            "with --evaluation and --user, that corpus is made an evaluation corpus only by its "
            "uploader or staff.")

    def add_arguments(self, parser):
        parser.add_argument("path", help="a UTF-8 text file")
        parser.add_argument("--name", required=True, help="the corpus name, e.g. web-en")
        parser.add_argument("--evaluation", action="store_true",
                            help="evaluate every new version on this corpus")
        parser.add_argument("--language", default="",
                            help="its language as a BCP 47 tag: en, de, pt-BR, zh-Hans")
        add_user_argument(parser)

    def handle(self, *args, path, name, evaluation, user, language, **options):
        uploader = acting_user(user)
        try:
            with refusals_as_command_errors(), open(path, "rb") as stream:
                corpus = import_corpus(stream=stream, name=name, is_evaluation=evaluation,
                                       original_filename=Path(path).name, uploaded_by=uploader,
                                       language=language)
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc.strerror}") from None
        except DatabaseError as exc:  # no row; a file it moved into place is left to the sweep
            raise CommandError(f"the database did not answer ({str(exc).strip()}): the corpus "
                               f"may not be stored; import it again once the database is back "
                               f"(the same bytes are stored once)") from None
        if corpus.name != name:
            self.stdout.write(f"these bytes are already the corpus {corpus.name!r}; nothing new "
                              f"was stored")
            return
        self.stdout.write(f"corpus {corpus.name!r}: {corpus.size_bytes} bytes, "
                          f"{corpus.line_count} lines, language "
                          f"{corpus.language or 'not given'}, sha256 {corpus.sha256[:12]}")
