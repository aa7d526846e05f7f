"""The rule for a corpus's language: a BCP 47 tag (``en``, ``pt-BR``, ``zh-Hans``, ``sr-Latn``),
written in its usual case."""

from __future__ import annotations

import regex

from tokenizers_app.errors import Invalid

_TAG = regex.compile(r"[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8}){0,4}")


def check_language(tag, field: str = "language") -> str:
    """``check_language("pt_br") -> "pt-BR"``, ``check_language("zh-hans") -> "zh-Hans"``,
    ``check_language("") -> ""`` (no language); other values raise ``Invalid`` about
    ``field``. gettext's ``_`` is read as BCP 47's ``-``."""
    if tag is None or tag == "":
        return ""
    if not isinstance(tag, str) or not _TAG.fullmatch(tag.replace("_", "-")):
        raise Invalid(f"language {tag!r} is not a BCP 47 tag: use a 2-3 letter language code, "
                      f"then optional subtags joined by '-' (en, de, pt-BR, zh-Hans, sr-Latn)",
                      field=field)
    first, *rest = tag.replace("_", "-").split("-")
    return "-".join([first.lower(), *map(_subtag_case, rest)])


def _subtag_case(subtag: str) -> str:
    """A script is title case (``Hans``), a region upper case (``BR``, ``419``), others lower."""
    if len(subtag) == 4 and subtag.isalpha():
        return subtag.title()
    if len(subtag) == 2 or (len(subtag) == 3 and subtag.isdigit()):
        return subtag.upper()
    return subtag.lower()
