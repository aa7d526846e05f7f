"""``manage.py evaluate NAME@REF --corpus NAME``"""

from django.core.management.base import BaseCommand, CommandError

from tokenizers_app.management.errors import refusals_as_command_errors
from tokenizers_app.models import Corpus, Evaluation, TokenizerVersion
from tokenizers_app.services.evaluations import evaluate_version


class Command(BaseCommand):
    help = ("Evaluate a version (NAME@NUMBER, NAME@ALIAS, or NAME for the latest) on a corpus, "
            "here and now; the result is stored and printed.")

    def add_arguments(self, parser):
        parser.add_argument("ref", help="e.g. web-en-32k@3 or web-en-32k@production")
        parser.add_argument("--corpus", required=True, help="the corpus name")

    def handle(self, *args, ref, corpus, **options):
        with refusals_as_command_errors():
            version = TokenizerVersion.objects.resolve(ref)
            [corpus] = Corpus.objects.by_names([corpus])
        evaluation = evaluate_version(version=version, corpus=corpus)
        if evaluation.status != Evaluation.Status.SUCCEEDED:
            raise CommandError(f"evaluation failed: {evaluation.error}")
        self.stdout.write(f"{version.label} on {corpus.name}:")
        for key, value in evaluation.metrics.items():
            shown = f"{value:.4f}" if isinstance(value, float) else value
            self.stdout.write(f"  {key:<28} {shown}")
