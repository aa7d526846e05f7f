"""``manage.py delete corpus NAME | tokenizer NAME | run ID [--user NAME]``"""

from django.core.management.base import BaseCommand, CommandError

from tokenizers_app.management.errors import refusals_as_command_errors
from tokenizers_app.management.users import acting_user, add_user_argument
from tokenizers_app.models import Corpus, Tokenizer, TrainingRun
from tokenizers_app.services.deletions import delete_corpus, delete_run, delete_tokenizer

KINDS = {"corpus": (Corpus, "name", delete_corpus),
         "tokenizer": (Tokenizer, "name", delete_tokenizer),
         "run": (TrainingRun, "pk", delete_run)}


class Command(BaseCommand):
    help = ("Delete a corpus (and its file), a tokenizer or a run that nothing depends on: no "
            "run trained on the corpus and no evaluation used it; the tokenizer has no version "
            "and no run; the run is finished and made no version. Versions are never deleted "
            "(deprecate them). With --user, only as the uploader, owner or starter, or staff.")

    def add_arguments(self, parser):
        parser.add_argument("kind", choices=sorted(KINDS))
        parser.add_argument("name", help="the corpus's or tokenizer's name, or the run's id")
        add_user_argument(parser)

    def handle(self, *args, kind, name, user, **options):
        acting = acting_user(user)
        model, key, delete = KINDS[kind]
        if key == "pk" and not name.isdigit():
            raise CommandError(f"a run is named by its id, a number, not {name!r}")
        found = model.objects.filter(**{key: name}).first()
        if found is None:
            raise CommandError(f"no {kind} {name!r}" if key == "name" else f"no {kind} {name}")
        with refusals_as_command_errors():
            delete(**{kind: found, "user": acting})
        self.stdout.write(f"{kind} {name} deleted" + (", and its file" if kind == "corpus"
                                                       else ""))
