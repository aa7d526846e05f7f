"""``manage.py compare NAME@REF NAME@REF ... --corpus C [--json]``"""

from tokenizers_app.bpe.metric_text import UNDEFINED, reported_text
from tokenizers_app.management.listing import ReadCommand, columns
from tokenizers_app.models import TokenizerVersion
from tokenizers_app.services.comparisons import compare_versions, evaluation_corpus
from tokenizers_app.shapes import ComparisonOut


class Command(ReadCommand):
    help = "Every metric of two or more versions on one evaluation corpus."

    def add_arguments(self, parser):
        parser.add_argument("refs", nargs="+", help="NAME@NUMBER or NAME@ALIAS")
        parser.add_argument("--corpus", required=True)
        super().add_arguments(parser)

    def handle_read(self, refs, corpus, **options):
        return ComparisonOut.of(compare_versions(
            versions=TokenizerVersion.objects.resolve_many(refs), corpus=evaluation_corpus(corpus)))

    def table(self, data):
        """One row per metric that some version reports (or while one has no result), one
        column per version; ``★`` marks the best value of a row. As on the compare page, a
        metric a finished evaluation did not report (not defined for its kind) is ``n/a``."""
        versions = data["versions"]
        rows = [[info["label"]] + [cell(v, name, info["best"]) for v in versions]
                for name, info in data["metrics"].items()
                if any(not v["metrics"] or name in v["metrics"] for v in versions)]
        return ([f"on {data['corpus']} (★ marks the best value):"]
                + columns(rows, ["METRIC"] + [v["ref"] for v in versions]))


def cell(version: dict, name: str, best: list[str]) -> str:
    if not version["metrics"]:
        return version["status"]
    if name not in version["metrics"]:
        return UNDEFINED
    shown = reported_text(version["metrics"], name)
    return f"{shown} ★" if version["ref"] in best else shown
