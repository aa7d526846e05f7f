"""``manage.py parity [A@1 B@2 ...] --set NAME``: the premium per language, as JSON."""

import json

from django.core.management.base import BaseCommand

from tokenizers_app.management.errors import refusals_as_command_errors
from tokenizers_app.models import ParallelSet, TokenizerVersion
from tokenizers_app.services.parity import as_json, parity


class Command(BaseCommand):
    help = ("The premium of versions on a parallel set, per language (tokens on the language / "
            "tokens on the pivot, over the same lines), and the parity spread, as JSON: the "
            "numbers of the set's page and of GET /api/parallel-sets/NAME/parity.")

    def add_arguments(self, parser):
        parser.add_argument("versions", nargs="*", help="NAME@REF; none: every version "
                                                        "evaluated on the set")
        parser.add_argument("--set", required=True, dest="set_name", help="the parallel set")

    def handle(self, *args, versions, set_name, **options):
        with refusals_as_command_errors():
            chosen = TokenizerVersion.objects.resolve_many(versions, most=50) if versions \
                else None
            result = parity(parallel_set=ParallelSet.objects.named(set_name), versions=chosen)
        self.stdout.write(json.dumps(as_json(result), indent=2, ensure_ascii=False))
