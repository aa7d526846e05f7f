"""``manage.py export_tokenizer NAME@REF --format F --out PATH``"""

from django.core.management.base import BaseCommand, CommandError

from tokenizers_app.bpe import FORMATS
from tokenizers_app.bpe.formats import write_tokenizer_files
from tokenizers_app.models import TokenizerVersion
from tokenizers_app.services.downloads import render_tokenizer_files


class Command(BaseCommand):
    help = ("Write a version in a format other tools load: hf (tokenizer.json), gpt2 (a folder "
            "with vocab.json + merges.txt), tiktoken (rank file + .json sidecar), minbpe, native. "
            "The files are the downloads' files (rendered once per digest).")

    def add_arguments(self, parser):
        parser.add_argument("ref", help="NAME@NUMBER, NAME@ALIAS, or NAME for the latest")
        parser.add_argument("--format", required=True, choices=FORMATS)
        parser.add_argument("--out", required=True, help="file (or folder, for gpt2) to write")

    def handle(self, *args, ref, format, out, **options):
        try:
            version = TokenizerVersion.objects.resolve(ref)
            files = render_tokenizer_files(version=version, format=format)
            written = write_tokenizer_files(files, out, format)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        except OSError as exc:
            raise CommandError(f"cannot write {out}: {exc.strerror}") from None
        self.stdout.write(f"{version.label} as {format}: {', '.join(map(str, written))}")
