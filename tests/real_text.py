"""Real text that every machine running the suite has: Django's own translations, the
parallel text in 99 languages that comes with the framework. No test reads a corpus that a
machine may lack, so a test that passes here passes in CI on the same lines."""

from __future__ import annotations

import functools
from pathlib import Path

import django

from tokenizers_app.bpe.po_files import read_po

DJANGO = Path(django.__file__).resolve().parent


@functools.cache
def django_messages(language: str = "multi") -> str:
    """Every translated message of Django and its contrib apps, one line each: ``"en"`` the
    English originals (from the French catalogues), ``"multi"`` every language's translations
    in turn."""
    paths = sorted(DJANGO.glob(f"**/locale/{'fr' if language == 'en' else '*'}/LC_MESSAGES/*.po"))
    lines = []
    for path in paths:
        catalog = read_po(path.read_bytes(), str(path))
        for (_, msgid), msgstr in catalog.messages.items():
            text = msgid if language == "en" else msgstr
            lines.extend(line for line in text.splitlines() if line.strip())
    if not lines:
        raise AssertionError(f"no Django translations under {DJANGO}")
    return "\n".join(lines) + "\n"
