"""``manage.py show NAME@REF [--json]``"""

from tokenizers_app.bpe.display import tokens_text
from tokenizers_app.bpe.metric_text import metric_text
from tokenizers_app.bpe.metrics import HEADLINE_METRICS
from tokenizers_app.management.listing import ReadCommand
from tokenizers_app.models import TokenizerVersion
from tokenizers_app.shapes import VersionDetailOut


class Command(ReadCommand):
    help = "Show a version (NAME@NUMBER or NAME@ALIAS): metrics per evaluation corpus, lineage."

    def add_arguments(self, parser):
        parser.add_argument("ref", help="e.g. web-en-32k@3 or web-en-32k@production")
        super().add_arguments(parser)

    def handle_read(self, ref, **options):
        return VersionDetailOut.of(TokenizerVersion.objects.resolve(ref))

    def table(self, v):
        run = v["lineage"]["training_run"]
        lines = [f"{v['ref']}  vocab {v['vocab_size']}, {v['merges']} merges, {v['lifecycle']}"
                 f"{'  aliases: ' + ', '.join(v['aliases']) if v['aliases'] else ''}",
                 f"digest   {v['digest']}", f"pattern  {v['pattern']}",
                 f"special  {tokens_text(v['special_tokens'])}",
                 f"source   {v['lineage']['source']} {v['lineage']['source_detail']}".rstrip()]
        if run:
            lines.append(f"run      {run['id']}: " + ", ".join(
                f"{c['name']} (sha256 {c['sha256'][:12]})" for c in run["corpora"]))
        for corpus, found in v["metrics"].items():
            numbers = found["metrics"]
            shown = ", ".join(f"{name} {metric_text(numbers[name], name)}"
                              for name in HEADLINE_METRICS if name in numbers)
            lines.append(f"on {corpus}: {shown or found['status']}")
        return lines
