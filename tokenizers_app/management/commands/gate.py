"""``manage.py gate NAME ALIAS --tolerance 0.01 --user STAFF`` (``--lift`` removes the gate)."""

from django.core.management.base import BaseCommand

from tokenizers_app.management.errors import refusals_as_command_errors
from tokenizers_app.management.users import user_named
from tokenizers_app.services.gates import find_alias, set_gate


class Command(BaseCommand):
    help = ("Gate an alias: a move must keep every id (identical or extends), every golden, and "
            "no headline metric worse than the current target's by more than the tolerance.")

    def add_arguments(self, parser):
        parser.add_argument("tokenizer")
        parser.add_argument("alias", help="e.g. production")
        parser.add_argument("--tolerance", type=float, default=0.0,
                            help="a share of the current value (0.01: 1%%); default 0")
        parser.add_argument("--lift", action="store_true", help="remove the gate")
        parser.add_argument("--user", required=True, help="the staff user")

    def handle(self, *args, **options):
        with refusals_as_command_errors():
            alias = set_gate(alias=find_alias(tokenizer_name=options["tokenizer"],
                                              name=options["alias"]),
                             tolerance=None if options["lift"] else options["tolerance"],
                             user=user_named(options["user"]))
        state = ("no gate" if alias.gate_tolerance is None
                 else f"gated, tolerance {alias.gate_tolerance:.2%}")
        self.stdout.write(f"{alias}: {state}")
