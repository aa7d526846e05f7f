"""``manage.py compare NAME@REF NAME@REF ... --corpus C [--json]``"""

from tokenizers_app.api.shapes import comparison_shape
from tokenizers_app.management.listing import ReadCommand, columns
from tokenizers_app.models import Corpus, TokenizerVersion
from tokenizers_app.templatetags.metrics import metric


class Command(ReadCommand):
    help = "Every metric of two or more versions on one evaluation corpus."

    def add_arguments(self, parser):
        parser.add_argument("refs", nargs="+", help="NAME@NUMBER or NAME@ALIAS")
        parser.add_argument("--corpus", required=True)
        super().add_arguments(parser)

    def handle_read(self, refs, corpus, **options):
        [found] = Corpus.objects.by_names([corpus])
        return comparison_shape(TokenizerVersion.objects.resolve_many(refs), found)

    def table(self, data):
        versions = data["versions"]
        rows = [[info["label"]] + [metric((v["metrics"] or {}).get(name), name)
                                   if v["metrics"] else v["status"] for v in versions]
                for name, info in data["metrics"].items()]
        return [f"on {data['corpus']}:"] + columns(rows, ["METRIC"] + [v["ref"] for v in versions])
