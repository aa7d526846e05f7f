"""``manage.py tokenizers [--json]``"""

from tokenizers_app.management.listing import ReadCommand, columns
from tokenizers_app.models import Tokenizer
from tokenizers_app.shapes import TokenizerOut


class Command(ReadCommand):
    help = "List the tokenizers: ready versions, the latest, and their aliases."

    def handle_read(self, **options):
        return [TokenizerOut.of(t) for t in Tokenizer.objects.with_latest().prefetch_related(
            "aliases__version").order_by("name")]

    def table(self, data):
        return columns([[t["name"], t["versions"], t["latest"],
                         " ".join(f"{a}->{n}" for a, n in t["aliases"].items())] for t in data],
                       ["NAME", "VERSIONS", "LATEST", "ALIASES"])
