"""``manage.py import_tokenizer PATH --tokenizer NAME [--format F]``"""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from tokenizers_app import services
from tokenizers_app.bpe import FORMATS

TOKENIZER_SUFFIXES = (".json", ".txt", ".tiktoken", ".model")


class Command(BaseCommand):
    help = ("Import a tokenizer file in any format the core reads (tokenizer.json, a .tiktoken "
            "rank file, a minbpe .model, our native .json), or a folder holding vocab.json + "
            "merges.txt, as a new version of a tokenizer.")

    def add_arguments(self, parser):
        parser.add_argument("path", help="a tokenizer file, or a folder of tokenizer files")
        parser.add_argument("--tokenizer", required=True, help="the tokenizer to add it to")
        parser.add_argument("--format", choices=FORMATS, help="default: detected from the files")

    def handle(self, *args, path, tokenizer, format, **options):
        try:
            files = read_tokenizer_files(Path(path))
            version = services.import_tokenizer(files=files, tokenizer_name=tokenizer,
                                                format=format,
                                                source_detail=f"imported from {path}")
        except OSError as exc:
            raise CommandError(f"cannot read {path}: {exc.strerror}") from None
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"version {version.label}: vocab size {version.vocab_size}, "
                          f"{version.merge_count} merges, digest {version.digest[:12]}")


def read_tokenizer_files(path: Path) -> dict[str, bytes]:
    """``{file name: bytes}``: a folder's tokenizer files, or one file (with the ``.json``
    sidecar of a ``.tiktoken`` rank file)."""
    if path.is_dir():
        files = {p.name: p.read_bytes() for p in sorted(path.iterdir())
                 if p.is_file() and p.suffix in TOKENIZER_SUFFIXES}
        if not files:
            raise ValueError(f"the folder {path} holds no tokenizer files")
        return files
    files = {path.name: path.read_bytes()}
    sidecar = path.with_suffix(".json")
    if path.suffix == ".tiktoken" and sidecar.is_file():
        files[sidecar.name] = sidecar.read_bytes()
    return files
