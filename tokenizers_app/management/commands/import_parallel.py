"""``manage.py import_parallel FILE --name NAME [--pivot en] [--user NAME]``, or
``manage.py import_parallel --corpora en=web-en de=web-de --name NAME`` (existing corpora of equal
line counts)."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from tokenizers_app.management.errors import refusals_as_command_errors
from tokenizers_app.management.users import acting_user, add_user_argument
from tokenizers_app.models import Corpus
from tokenizers_app.services.parallel import import_parallel_set, parallel_set_from_corpora


class Command(BaseCommand):
    help = ("Import a parallel set: a TSV whose header names the languages, a JSON Lines file "
            "of {\"en\": ..., \"de\": ...} objects, or a zip of gettext .po files (msgid is the "
            "pivot). Each language becomes an evaluation corpus NAME.LANGUAGE.")

    def add_arguments(self, parser):
        parser.add_argument("path", nargs="?", help="a .tsv, .jsonl or .zip file")
        parser.add_argument("--corpora", nargs="+", metavar="LANG=CORPUS",
                            help="instead of a file: existing corpora of equal line counts, "
                                 "aligned line by line (en=web-en de=web-de)")
        parser.add_argument("--name", required=True, help="the set's name, e.g. flores-dev")
        parser.add_argument("--pivot", default="en", help="the pivot language (BCP 47): en")
        add_user_argument(parser)

    def handle(self, *args, path, name, pivot, user, corpora, **options):
        uploader = acting_user(user)
        if bool(path) == bool(corpora):
            raise CommandError("give a file, or --corpora LANG=CORPUS ..., not both")
        with refusals_as_command_errors():
            if corpora:
                created = parallel_set_from_corpora(name=name, corpora=_by_language(corpora),
                                                    pivot=pivot, uploaded_by=uploader)
            else:
                created = import_parallel_set(data=_read(path), name=name, pivot=pivot,
                                              original_filename=Path(path).name,
                                              uploaded_by=uploader)
        skipped = ", ".join(f"{n} {reason}" for reason, n in created.skipped.items()) or "none"
        self.stdout.write(f"parallel set {created.name!r}: {created.line_count} aligned lines in "
                          f"{created.members.count()} languages (pivot {created.pivot}); "
                          f"{created.dropped_lines} lines dropped (missing in some language); "
                          f"skipped while reading: {skipped}")


def _read(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror}") from None


def _by_language(pairs: list[str]) -> dict:
    """``["en=web-en", "de=web-de"]`` -> ``{"en": <Corpus web-en>, "de": <Corpus web-de>}``."""
    languages = {}
    for pair in pairs:
        language, equals, corpus = pair.partition("=")
        if not equals or not language or not corpus:
            raise CommandError(f"{pair!r}: write LANG=CORPUS, e.g. de=web-de")
        languages[language] = corpus
    found = Corpus.objects.by_names(languages.values())
    return dict(zip(languages, found))
