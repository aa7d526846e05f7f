"""``manage.py verify``"""

import sys

from django.core.management.base import BaseCommand

from tokenizers_app.models import Corpus, TokenizerVersion
from tokenizers_app.services.downloads import damaged_downloads
from tokenizers_app.services.integrity import damaged_corpora, damaged_versions


class Command(BaseCommand):
    help = ("Check every ready version's rows against its content digest, and every corpus file "
            "and rendered download in the store against its size and sha256; print each "
            "mismatch and exit with status 1 if any.")

    def handle(self, *args, **options):
        problems = [problem for _, problem in damaged_versions()]
        problems += [problem for _, problem in damaged_corpora()]
        problems += [problem for _, problem in damaged_downloads()]
        for problem in problems:
            self.stdout.write(problem)
        versions = TokenizerVersion.objects.ready().count()
        corpora = Corpus.objects.count()
        summary = f"checked {versions} versions and {corpora} corpora: "
        if problems:
            self.stderr.write(summary + f"{len(problems)} problem(s)")
            sys.exit(1)
        self.stdout.write(summary + "all as recorded")
