"""``manage.py versions NAME [--json]``"""

from tokenizers_app.management.listing import ReadCommand, columns
from tokenizers_app.models import Tokenizer, TokenizerVersion
from tokenizers_app.shapes import VersionOut


class Command(ReadCommand):
    help = "List a tokenizer's ready versions, newest first."

    def add_arguments(self, parser):
        parser.add_argument("name")
        super().add_arguments(parser)

    def handle_read(self, name, **options):
        if not Tokenizer.objects.filter(name=name).exists():
            raise ValueError(f"no tokenizer named {name!r}")
        return [VersionOut.of(v) for v in TokenizerVersion.objects.filter(tokenizer__name=name)
                .latest_first().select_related("tokenizer", "training_run")
                .prefetch_related("aliases")]

    def table(self, data):
        return columns([[v["ref"], v["vocab_size"], v["merges"], v["lifecycle"],
                         ",".join(v["aliases"]), v["lineage"]["source"], v["digest"][:12]]
                        for v in data],
                       ["VERSION", "VOCAB", "MERGES", "LIFECYCLE", "ALIASES", "SOURCE",
                        "DIGEST"])
