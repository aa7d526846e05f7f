"""What an import is told besides its files, and what it says back: the special tokens given
with a bare rank file, and the note on the pattern a version got from files that hold none."""

from __future__ import annotations

import json

from ..bpe.formats import PATTERNLESS_FORMATS, detect_format
from ..bpe.formats.tiktoken import recognise
from ..bpe.pretokenize import pattern_name
from ..errors import Invalid
from ..models import TokenizerVersion
from .versions import ENGINE_FORMATS


def special_tokens_from_json(text: str | None) -> dict[str, int] | None:
    """The special tokens given with a bare rank file, as a JSON object of ids:
    ``'{"<|endoftext|>": 50256}' -> {"<|endoftext|>": 50256}``; blank: ``None`` (none given)."""
    if text is None or not text.strip():
        return None
    try:
        tokens = json.loads(text)
    except json.JSONDecodeError as exc:
        raise Invalid(f"special tokens must be a JSON object such as "
                      f'{{"<|endoftext|>": 50256}}: {exc.msg} at character {exc.pos}',
                      field="special_tokens") from None
    if not isinstance(tokens, dict) or not all(
            type(token_id) is int and token_id >= 0 for token_id in tokens.values()):
        raise Invalid(f"special tokens must be a JSON object of ids >= 0 such as "
                      f'{{"<|endoftext|>": 50256}}, got {text.strip()!r:.80}',
                      field="special_tokens")
    return tokens


def pattern_note(*, version: TokenizerVersion, files: dict[str, bytes], format: str | None = None,
                 pattern: str | None = None) -> str | None:
    """What an import says of the pattern when its files hold none (GPT-2's): the one the version
    splits text with, as given or as assumed; ``None`` for files that name their own."""
    detected = None if format in ENGINE_FORMATS else _detected(files, format)
    if detected == "tiktoken":
        return _rank_file_note(version, files, pattern)
    if detected not in PATTERNLESS_FORMATS:
        return None
    if version.kind.has_alphabet:  # character-level: its pattern is the word split
        return (f"vocab.json + merges.txt hold no split and no lowercasing: {version.label} "
                f"splits words at whitespace and keeps their case")
    used = (f"GPT-2 files hold no pattern: {version.label} splits text with "
            f"{pattern_name(version.pattern)}")
    if pattern is not None:
        return f"{used}, as given"
    return (f"{used}, assumed; import them again with the pattern it was trained with (gpt4, "
            f"or its regex) if that was another")


def _rank_file_note(version: TokenizerVersion, files: dict[str, bytes],
                    pattern: str | None) -> str | None:
    """What a bare rank file's import says: the published encoding it was recognised as, or the
    pattern and special tokens it was given."""
    if len(files) > 1:  # with its sidecar
        return None
    specials = len(version.special_tokens)
    known = recognise(next(iter(files.values())))
    if known is not None:
        return (f"recognised as tiktoken's {known} by its sha256: pattern "
                f"{pattern_name(version.pattern)} and {specials} special "
                f"token{'s' if specials != 1 else ''}, as tiktoken has "
                f"them")
    return (f"a bare rank file: {version.label} splits text with {pattern_name(version.pattern)} "
            f"and has {specials} special token{'s' if specials != 1 else ''}, as given")


def _detected(files: dict[str, bytes], format: str | None) -> str | None:
    try:
        return format or detect_format(files)
    except ValueError:  # files only an engine reads
        return None
