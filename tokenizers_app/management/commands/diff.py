"""``manage.py diff A@1 B@2 [--corpus C] [--search TEXT] [--json]``: what changed between two
versions (the verdict, ids that name other tokens, tokens added and removed, merges added; with
``--corpus``, the share of its lines encoded to the same ids)."""

import json

from django.core.management.base import BaseCommand

from tokenizers_app.management.errors import refusals_as_command_errors
from tokenizers_app.bpe.metric_text import metric_text
from tokenizers_app.models import Corpus, TokenizerVersion
from tokenizers_app.services.diffs import diff_versions

SHOWN = 20


class Command(BaseCommand):
    help = "What changed between two versions, of one tokenizer or of two."

    def add_arguments(self, parser):
        parser.add_argument("source", metavar="FROM", help="NAME@REF")
        parser.add_argument("target", metavar="TO", help="NAME@REF")
        parser.add_argument("--corpus", help="encode this corpus's lines with both")
        parser.add_argument("--search", default="", help="list only changed ids whose token "
                                                         "holds this")
        parser.add_argument("--json", action="store_true", help="the API's answer, as JSON")

    def handle(self, *args, **options):
        with refusals_as_command_errors():
            versions = TokenizerVersion.objects.select_related("tokenizer")
            corpus = Corpus.objects.by_names([options["corpus"]])[0] if options["corpus"] \
                else None
            found = diff_versions(old=versions.resolve(options["source"]),
                                  new=versions.resolve(options["target"]), corpus=corpus,
                                  search=options["search"])
        if options["json"]:
            self.stdout.write(json.dumps(found, ensure_ascii=False, indent=2))
            return
        for line in summary_lines(found):
            self.stdout.write(line)


def summary_lines(found: dict) -> list[str]:
    lines = [f"{found['from']} -> {found['to']}: {found['verdict'].replace('_', ' ')}"]
    if found["new_ids"]:
        lines.append(f"new ids {found['new_ids'][0]}..{found['new_ids'][1]}")
    lines.append(f"ids that name other tokens: {found['changed_count']}; tokens added "
                 f"{found['added_count']}, removed {found['removed_count']}; merges added "
                 f"{found['merges_added']}")
    lines += [f"  id {row['id']}: {row['from']!r} -> {row['to']!r}"
              for row in found["changed"][:SHOWN]]
    lines += [f"  id {row['from']} -> {row['to']}" for row in found["id_map"][:SHOWN]]
    corpus = found["corpus"]
    if corpus:
        share = corpus["unchanged_share"]
        lines.append(f"corpus {corpus['name']}: {share:.1%} of {corpus['lines']} lines unchanged; "
                     f"tokens {corpus['tokens_before']} -> {corpus['tokens_after']}"
                     if share is not None else f"corpus {corpus['name']}: no line")
        for name, script in corpus["scripts"].items():
            lines.append(f"  {name}: {script['unchanged_lines']}/{script['lines']} lines "
                         f"unchanged, tokens {script['tokens_before']} -> "
                         f"{script['tokens_after']}")
        for metric in corpus["metrics"]:
            if metric["change"] is not None:
                lines.append(f"  {metric['label']}: {metric_text(metric['from'], metric['name'])}"
                             f" -> {metric_text(metric['to'], metric['name'])}")
    return lines
