"""``manage.py corpora [NAME] [--json]``"""

from tokenizers_app.management.listing import ReadCommand, columns
from tokenizers_app.models import Corpus
from tokenizers_app.shapes import CorpusOut


class Command(ReadCommand):
    help = "List the corpora, or show one."

    def add_arguments(self, parser):
        parser.add_argument("name", nargs="?")
        super().add_arguments(parser)

    def handle_read(self, name=None, **options):
        if name is None:
            return [CorpusOut.of(c) for c in Corpus.objects.order_by("name")]
        return CorpusOut.of(Corpus.objects.by_names([name])[0])

    def table(self, data):
        rows = data if isinstance(data, list) else [data]
        return columns([[c["name"], c["size_bytes"], c["line_count"],
                         "yes" if c["evaluation"] else "no", c["sha256"]] for c in rows],
                       ["NAME", "BYTES", "LINES", "EVALUATION", "SHA256"])
