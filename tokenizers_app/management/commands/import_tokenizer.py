"""``manage.py import_tokenizer PATH --tokenizer NAME [--format F] [--pattern P]
[--special-token TOKEN=ID ...] [--user NAME]``"""


from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from tokenizers_app.bpe.formats import read_tokenizer_files
from tokenizers_app.management.errors import refusals_as_command_errors
from tokenizers_app.management.users import acting_user, add_user_argument
from tokenizers_app.services.import_notes import pattern_note
from tokenizers_app.services.versions import IMPORT_FORMATS, import_tokenizer


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
        parser.add_argument("--pattern", help="for GPT-2 files (vocab.json + merges.txt) and "
                                              "bare tiktoken rank files, which hold no pattern: "
                                              "gpt2 (assumed for GPT-2 files), gpt4, o200k, none, "
                                              "a regex, or a published tiktoken encoding "
                                              "(cl100k_base: its pattern and special tokens); "
                                              "other files name their own")
        parser.add_argument("--special-token", action="append", metavar="TOKEN=ID",
                            dest="special_tokens", help="a bare rank file's special token and "
                                                        "its id (repeat for each)")
        add_user_argument(parser)

    def handle(self, *args, path, tokenizer, format, pattern, special_tokens, user, **options):
        acting = acting_user(user)
        special_tokens = _special_tokens(special_tokens)
        try:
            with refusals_as_command_errors():
                files = read_tokenizer_files(path, settings.TOKENIZER_IMPORT_MAX_BYTES)
                version = import_tokenizer(files=files, tokenizer_name=tokenizer,
                                           format=format, pattern=pattern, created_by=acting,
                                           special_tokens=special_tokens,
                                           source_detail=f"imported from {path}")
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc.strerror}") from None
        self.stdout.write(f"version {version.label}: vocab size {version.vocab_size}, "
                          f"{version.merge_count} merges, digest {version.digest[:12]}")
        note = pattern_note(version=version, files=files, format=format, pattern=pattern)
        if note:
            self.stdout.write(note)


def _special_tokens(given: list[str] | None) -> dict[str, int] | None:
    """``["<|endoftext|>=50256"] -> {"<|endoftext|>": 50256}`` (the id after the last ``=``)."""
    if not given:
        return None
    tokens = {}
    for item in given:
        token, _, token_id = item.rpartition("=")
        if not token or not token_id.isdigit():
            raise CommandError(f"--special-token {item!r}: write TOKEN=ID, such as "
                               f"'<|endoftext|>=50256'")
        tokens[token] = int(token_id)
    return tokens
