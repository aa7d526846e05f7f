"""``manage.py show NAME@REF [--json]``"""

from tokenizers_app.api.shapes import version_shape
from tokenizers_app.management.listing import ReadCommand
from tokenizers_app.models import TokenizerVersion
from tokenizers_app.templatetags.metrics import metric


class Command(ReadCommand):
    help = "Show a version (NAME@NUMBER or NAME@ALIAS): metrics per evaluation corpus, lineage."

    def add_arguments(self, parser):
        parser.add_argument("ref", help="e.g. web-en-32k@3 or web-en-32k@production")
        super().add_arguments(parser)

    def handle_read(self, ref, **options):
        version = TokenizerVersion.objects.resolve(ref)
        evaluations = version.evaluations.without_word_tokens().select_related("corpus")
        return version_shape(version, evaluations.order_by("corpus__name"))

    def table(self, v):
        run = v["lineage"]["training_run"]
        lines = [f"{v['ref']}  vocab {v['vocab_size']}, {v['merges']} merges, {v['lifecycle']}"
                 f"{'  aliases: ' + ', '.join(v['aliases']) if v['aliases'] else ''}",
                 f"digest   {v['digest']}", f"pattern  {v['pattern']}",
                 f"special  {' '.join(v['special_tokens']) or 'none'}",
                 f"source   {v['lineage']['source']} {v['lineage']['source_detail']}".rstrip()]
        if run:
            lines.append(f"run      {run['id']}: " + ", ".join(
                f"{c['name']} (sha256 {c['sha256'][:12]})" for c in run["corpora"]))
        for corpus, found in v["metrics"].items():
            numbers = found["metrics"]
            shown = ", ".join(f"{name} {metric(numbers[name], name)}" for name in (
                "compression_ratio", "word_coverage", "tokens_per_word") if name in numbers)
            lines.append(f"on {corpus}: {shown or found['status']}")
        return lines
