"""The command line of the BPE core: train, encode, decode, export and inspect tokenizers.

    python -m tokenizers_app.bpe train --input corpus.txt --vocab-size 1000 --out tok.json
    python -m tokenizers_app.bpe encode --tokenizer tok.json --text "Hello world"
    python -m tokenizers_app.bpe decode --tokenizer tok.json 15496 995
    python -m tokenizers_app.bpe export --tokenizer tok.json --format hf --out tokenizer.json
    python -m tokenizers_app.bpe info --tokenizer tok.json

Bad input (a missing file, a bad format, an unknown id, ...) prints one ``error:`` line on stderr
and exits with status 2; there is never a traceback for it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .char_bpe import SPLITS, UNK
from .formats import FORMATS, load_tokenizer, save_tokenizer
from .parameters import TrainingParameters, check_training_parameters
from .trainers import train
from .training import TrainingCancelled

EXIT_USAGE = 2


class _Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are one line, like every other error here."""

    def error(self, message: str):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m tokenizers_app.bpe",
                     description="Train, use and convert BPE tokenizers.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_train(commands)
    _add_encode(commands)
    _add_decode(commands)
    _add_export(commands)
    _add_info(commands)
    return parser


def _add_tokenizer_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tokenizer", required=True, type=Path, metavar="PATH",
                        help="tokenizer file or folder (any supported format)")
    parser.add_argument("--tokenizer-format", choices=FORMATS, metavar="F",
                        help="format of --tokenizer (default: detected)")


def _add_train(commands) -> None:
    parser = commands.add_parser("train", help="train a BPE tokenizer on text files")
    parser.add_argument("--input", required=True, nargs="+", type=Path, metavar="PATH",
                        help="UTF-8 text files; each file is one document")
    parser.add_argument("--vocab-size", required=True, type=int, metavar="N",
                        help="tokens in total: special tokens + 256 bytes + merges")
    parser.add_argument("--algorithm", choices=("byte_bpe", "char_bpe"), default="byte_bpe",
                        help="byte-level BPE (default) or character-level BPE with </w>")
    parser.add_argument("--pattern", metavar="P",
                        help="byte_bpe: gpt2, gpt4, o200k, none or a regex (default: gpt2)")
    parser.add_argument("--split", choices=tuple(SPLITS), default="whitespace",
                        help="char_bpe: how text is cut into words (default: whitespace)")
    parser.add_argument("--lowercase", action="store_true", help="char_bpe: lowercase words")
    parser.add_argument("--special-token", action="append", default=[], metavar="T",
                        help="a special token (repeat for several; ids 0, 1, ... in order)")
    parser.add_argument("--min-frequency", type=int, default=1, metavar="N",
                        help="stop when the best pair occurs fewer times (default: 1)")
    parser.add_argument("--out", required=True, type=Path, metavar="PATH")
    parser.add_argument("--format", choices=FORMATS, default="native", metavar="F",
                        help=f"output format: {', '.join(FORMATS)} (default: native)")
    parser.set_defaults(run=run_train)


def _add_encode(commands) -> None:
    parser = commands.add_parser("encode", help="print the token ids of a text")
    _add_tokenizer_options(parser)
    parser.add_argument("--text", help="the text (default: read standard input)")
    parser.add_argument("--allow-special", action="store_true",
                        help="encode special-token text as special tokens (default: as plain "
                             "text)")
    parser.set_defaults(run=run_encode)


def _add_decode(commands) -> None:
    parser = commands.add_parser("decode", help="print the text of token ids")
    _add_tokenizer_options(parser)
    parser.add_argument("ids", nargs="+", type=int, metavar="ID")
    parser.set_defaults(run=run_decode)


def _add_export(commands) -> None:
    parser = commands.add_parser("export", help="write a tokenizer in another format")
    _add_tokenizer_options(parser)
    parser.add_argument("--format", required=True, choices=FORMATS, metavar="F",
                        help=f"one of {', '.join(FORMATS)}")
    parser.add_argument("--out", required=True, type=Path, metavar="PATH",
                        help="file to write (a folder for gpt2)")
    parser.set_defaults(run=run_export)


def _add_info(commands) -> None:
    parser = commands.add_parser("info", help="describe a tokenizer")
    _add_tokenizer_options(parser)
    parser.set_defaults(run=run_info)


# -- commands ---------------------------------------------------------------------------------

def run_train(args) -> None:
    result = train(list(args.input), _parameters(args), progress=_progress)
    if sys.stderr.isatty():
        print(file=sys.stderr)  # end the progress line
    tokenizer = result.tokenizer()
    written = save_tokenizer(tokenizer, args.out, args.format)
    print(f"trained {len(tokenizer.merges)} merges, vocab size {tokenizer.vocab_size}",
          file=sys.stderr)
    _warn_lost_pattern(tokenizer, args.format)
    _print_paths(written)


def _parameters(args) -> TrainingParameters:
    """The command line's parameters, checked once (``check_training_parameters``)."""
    if args.algorithm == "char_bpe":
        if args.pattern is not None:
            raise ValueError("--pattern is for byte_bpe; char_bpe cuts words with --split")
        specials = args.special_token if UNK in args.special_token else [UNK,
                                                                          *args.special_token]
        return check_training_parameters(algorithm="char_bpe", vocab_size=args.vocab_size,
                                         special_tokens=specials, lowercase=args.lowercase,
                                         split=args.split, min_frequency=args.min_frequency)
    return check_training_parameters(vocab_size=args.vocab_size,
                                     special_tokens=args.special_token,
                                     pattern=args.pattern or "gpt2",
                                     min_frequency=args.min_frequency)


def _progress(stage: str, done: int, total: int) -> None:
    unit = "bytes" if stage == "count" else "merges"
    end = "\r" if sys.stderr.isatty() else "\n"
    print(f"{stage}: {done}/{total} {unit}", end=end, file=sys.stderr, flush=True)


def run_encode(args) -> None:
    tokenizer = _load(args)
    text = args.text if args.text is not None else sys.stdin.buffer.read().decode("utf-8")
    if args.allow_special:
        ids = tokenizer.encode(text, allowed_special="all")
    else:
        ids = tokenizer.encode_ordinary(text)
    print(" ".join(map(str, ids)))


def run_decode(args) -> None:
    text = _load(args).decode(args.ids)
    sys.stdout.buffer.write(text.encode("utf-8"))
    sys.stdout.flush()


def run_export(args) -> None:
    tokenizer = _load(args)
    _print_paths(save_tokenizer(tokenizer, args.out, args.format))
    _warn_lost_pattern(tokenizer, args.format)


def _warn_lost_pattern(tokenizer, format: str) -> None:
    if format == "gpt2" and tokenizer.pattern != "gpt2":
        print(f"note: vocab.json + merges.txt hold no pattern; readers will split text with "
              f"gpt2's regex, not {tokenizer.pattern!r}", file=sys.stderr)


def run_info(args) -> None:
    tokenizer = _load(args)
    specials = ", ".join(f"{token!r}={token_id}" for token, token_id in
                         tokenizer.special_ids.items())
    print(f"algorithm: {tokenizer.algorithm}")
    if tokenizer.algorithm == "char_bpe":
        print(f"split: {tokenizer.pattern}")
        print(f"lowercase: {'yes' if tokenizer.lowercase else 'no'}")
    else:
        print(f"pattern: {tokenizer.pattern}")
    print(f"vocab size: {tokenizer.vocab_size}")
    print(f"merges: {len(tokenizer.merges)}")
    print(f"merge counts: {'yes' if tokenizer.merge_counts is not None else 'unknown'}")
    print(f"special tokens: {specials or '(none)'}")


def _load(args):
    return load_tokenizer(args.tokenizer, args.tokenizer_format)


def _print_paths(paths) -> None:
    for path in paths:
        print(path)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.run(args)
    except (ValueError, OSError) as exc:
        message = " ".join(str(exc).split()) or type(exc).__name__
        print(f"error: {message}", file=sys.stderr)
        return EXIT_USAGE
    except (KeyboardInterrupt, TrainingCancelled):
        print("error: interrupted", file=sys.stderr)
        return 130
    return 0
