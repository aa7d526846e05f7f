"""The rule for the names people give corpora and tokenizers."""

from __future__ import annotations

import regex

_NAME = regex.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def check_name(kind: str, name) -> str:
    """``check_name("tokenizer", "web-en-32k") -> "web-en-32k"``; other names raise ValueError."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(f"{kind} name {name!r} is not valid: use 1-100 letters, digits, '.', '_' "
                         f"or '-', starting with a letter or digit")
    return name
