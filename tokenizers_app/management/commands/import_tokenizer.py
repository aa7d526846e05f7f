"""``manage.py import_tokenizer PATH --tokenizer NAME [--format F] [--pattern P] [--user NAME]``"""


from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from tokenizers_app.bpe.formats import read_tokenizer_files
from tokenizers_app.management.errors import refusals_as_command_errors
from tokenizers_app.management.users import acting_user, add_user_argument
from tokenizers_app.services.versions import IMPORT_FORMATS, import_tokenizer, pattern_note


class Command(BaseCommand):
    help = ("Import a tokenizer file in any format the core reads (tokenizer.json, a .tiktoken "
            "rank file, a minbpe .model, our native .json), a folder holding vocab.json + "
            "merges.txt, any other tokenizer.json that Hugging Face tokenizers loads (or a "
            "transformers folder), or a SentencePiece model, as a new version of a tokenizer. With --user, only into a new tokenizer "
            "or one the user owns (staff: any).")

    def add_arguments(self, parser):
        parser.add_argument("path", help="a tokenizer file, or a folder of tokenizer files")
        parser.add_argument("--tokenizer", required=True, help="the tokenizer to add it to")
        parser.add_argument("--format", choices=IMPORT_FORMATS, help="default: detected from the files")
        parser.add_argument("--pattern", help="for GPT-2 files (vocab.json + merges.txt), which "
                                              "hold no pattern: gpt2 (assumed), gpt4, none or a "
                                              "regex; other files name their own")
        add_user_argument(parser)

    def handle(self, *args, path, tokenizer, format, pattern, user, **options):
        acting = acting_user(user)
        try:
            with refusals_as_command_errors():
                files = read_tokenizer_files(path, settings.TOKENIZER_IMPORT_MAX_BYTES)
                version = import_tokenizer(files=files, tokenizer_name=tokenizer,
                                           format=format, pattern=pattern, created_by=acting,
                                           source_detail=f"imported from {path}")
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc.strerror}") from None
        self.stdout.write(f"version {version.label}: vocab size {version.vocab_size}, "
                          f"{version.merge_count} merges, digest {version.digest[:12]}")
        note = pattern_note(version=version, files=files, format=format, pattern=pattern)
        if note:
            self.stdout.write(note)
