"""``manage.py encode NAME@REF --text TEXT [--json]``"""

from tokenizers_app.management.listing import ReadCommand
from tokenizers_app.models import TokenizerVersion


class Command(ReadCommand):
    help = "Encode a text with a version (special-token text as plain text unless --allow-special)."

    def add_arguments(self, parser):
        parser.add_argument("ref")
        parser.add_argument("--text", required=True)
        parser.add_argument("--allow-special", action="store_true")
        super().add_arguments(parser)

    def handle_read(self, ref, text, allow_special, **options):
        tokenizer = TokenizerVersion.objects.resolve(ref).cached_tokenizer()
        ids = tokenizer.encode(text, allowed_special="all") if allow_special else \
            tokenizer.encode_ordinary(text)
        return {"ids": ids, "tokens": tokenizer.token_table.texts_of(ids)}

    def table(self, data):
        return [" ".join(map(str, data["ids"])), " ".join(data["tokens"])]
