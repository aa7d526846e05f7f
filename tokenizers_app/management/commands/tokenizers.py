"""``manage.py tokenizers [--json]``"""

from tokenizers_app.api.shapes import tokenizer_shape
from tokenizers_app.management.listing import ReadCommand, columns
from tokenizers_app.models import Tokenizer


class Command(ReadCommand):
    help = "List the tokenizers: ready versions, the latest, and their aliases."

    def handle_read(self, **options):
        return [tokenizer_shape(t) for t in Tokenizer.objects.with_latest().prefetch_related(
            "aliases__version").order_by("name")]

    def table(self, data):
        return columns([[t["name"], t["versions"], t["latest"],
                         " ".join(f"{a}->{n}" for a, n in t["aliases"].items())] for t in data],
                       ["NAME", "VERSIONS", "LATEST", "ALIASES"])
