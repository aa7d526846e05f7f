"""The rule for the names people give corpora and tokenizers."""

from __future__ import annotations

import regex

from tokenizers_app.errors import Invalid

_NAME = regex.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


def check_name(kind: str, name, field: str | None = None) -> str:
    """``check_name("tokenizer", "web-en-32k") -> "web-en-32k"``; other names raise ``Invalid``
    about ``field`` (the input that holds the name; by default ``kind``)."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise Invalid(f"{kind} name {name!r} is not valid: use 1-100 letters, digits, '.', '_' "
                      f"or '-', starting with a letter or digit", field=field or kind)
    return name
