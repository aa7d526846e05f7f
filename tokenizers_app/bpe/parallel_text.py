"""Parallel text: the same lines in several languages, read from a TSV, a JSON Lines file or a
zip of gettext ``.po`` files, and aligned so that every language has the same lines.

- TSV: the header names the languages (``en<TAB>de<TAB>fr``); a row with another number of
  fields, or an empty field, is misaligned.
- JSON Lines: one ``{"en": ..., "de": ...}`` object per line; the languages are every key seen;
  a line without one of them (or with an empty text) is misaligned.
- ``.po`` zip: each file's ``msgid`` is the pivot's line and its ``msgstr`` the file's language's
  (from its header's ``Language``, else its folder above ``LC_MESSAGES``, else its name); the
  files of one language are merged. A message some language lacks is misaligned.

A misaligned line is dropped from every language and counted. Each run of whitespace inside a
text (a line break of a ``.po`` message, a JSON string's ``\\n``) becomes one space, in every
language alike, so each text is one line.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from .po_files import read_po

MAX_PO_FILES = 2000
MAX_UNZIPPED_BYTES = 256 * 1024 * 1024


@dataclass
class ParallelText:
    """``lines[language]`` holds the aligned lines (the same count in every language)."""

    lines: dict[str, list[str]]
    source_format: str
    dropped: int = 0
    skipped: Counter = field(default_factory=Counter)

    @property
    def line_count(self) -> int:
        return len(next(iter(self.lines.values()), []))


def read_parallel(data: bytes, filename: str = "", pivot: str = "en") -> ParallelText:
    """Read a TSV, JSON Lines or ``.po`` zip (told apart by the zip's signature, then by the
    first character: ``{`` is JSON Lines)."""
    if data[:4] == b"PK\x03\x04":
        return read_po_zip(data, pivot)
    text = _utf8(data, filename or "the file")
    if text.lstrip()[:1] == "{":
        return read_jsonl(text)
    return read_tsv(text)


def read_tsv(text: str) -> ParallelText:
    """``read_tsv("en\\tde\\nyes\\tja\\nno\\n").lines -> {"en": ["yes"], "de": ["ja"]}`` (the
    second row lacks a field: dropped)."""
    rows = text.splitlines()
    if not rows or not rows[0].strip():
        raise ValueError("line 1: the TSV header must name the languages, separated by tabs")
    languages = [name.strip() for name in rows[0].split("\t")]
    _check_languages(languages, "line 1 (the header)")
    records = []
    for row in rows[1:]:
        cells = row.split("\t")
        records.append(dict(zip(languages, cells)) if len(cells) == len(languages) else None)
    return _aligned(records, languages, "tsv")


def read_jsonl(text: str) -> ParallelText:
    """``read_jsonl('{"en": "yes", "de": "ja"}\\n{"en": "no"}').lines -> {"en": ["yes"],
    "de": ["ja"]}``; a line that is not a JSON object of strings raises naming it."""
    records, languages = [], {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"line {number}: not JSON ({exc.msg})") from None
        if not isinstance(record, dict) or not all(isinstance(v, str) for v in record.values()):
            raise ValueError(f"line {number}: each line must be an object of texts, "
                             f'{{"en": "...", "de": "..."}}')
        languages.update(dict.fromkeys(record))
        records.append(record)
    _check_languages(list(languages), "the keys")
    return _aligned(records, list(languages), "jsonl")


def read_po_zip(data: bytes, pivot: str = "en") -> ParallelText:
    """Every ``.po`` file of a zip, each message's ``msgid`` as the pivot's line."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        members = [m for m in archive.infolist() if m.filename.endswith(".po")]
    except zipfile.BadZipFile as exc:
        raise ValueError(f"not a readable zip file ({exc})") from None
    if not members:
        raise ValueError("the zip holds no .po file")
    if len(members) > MAX_PO_FILES or sum(m.file_size for m in members) > MAX_UNZIPPED_BYTES:
        raise ValueError(f"the zip holds too much: at most {MAX_PO_FILES} .po files and "
                         f"{MAX_UNZIPPED_BYTES // 2**20} MiB unzipped")
    return po_catalogs([(m.filename, archive.read(m)) for m in members], pivot)


def po_catalogs(files, pivot: str = "en") -> ParallelText:
    """``files``: ``(path, bytes)`` of ``.po`` files; aligned on the pivot's messages."""
    by_language: dict[str, dict] = {}
    skipped: Counter = Counter()
    for path, data in files:
        catalog = read_po(data, path)
        language = gettext_to_bcp47(catalog.language or _language_of_path(path))
        if language == pivot:  # its msgid lines are the pivot's already
            skipped["files in the pivot language"] += 1
            continue
        skipped.update(catalog.skipped)
        merged = by_language.setdefault(language, {})
        for key, translation in catalog.messages.items():
            merged.setdefault(key, translation)
    if not by_language:
        raise ValueError("no .po file in a language other than the pivot")
    keys = dict.fromkeys(key for messages in by_language.values() for key in messages)
    records = [{pivot: msgid, **{lang: messages.get(key) for lang, messages in
                                 by_language.items()}}
               for key in keys for msgid in [key[1]]]
    languages = [pivot, *sorted(by_language)]
    result = _aligned(records, languages, "po")
    result.skipped = skipped
    return result


SCRIPT_MODIFIERS = {"latin": "Latn", "cyrillic": "Cyrl", "arabic": "Arab", "devanagari": "Deva"}


def gettext_to_bcp47(name: str) -> str:
    """gettext's locale names as BCP 47: ``pt_BR -> "pt-BR"``, ``sr@latin -> "sr-Latn"``,
    ``ca@valencia -> "ca-valencia"``."""
    name, _, modifier = name.partition("@")
    name = name.replace("_", "-")
    if modifier:
        name += "-" + SCRIPT_MODIFIERS.get(modifier.lower(), modifier)
    return name


def _language_of_path(path: str) -> str:
    """``locale/pt_BR/LC_MESSAGES/django.po -> "pt_BR"``, ``de.po -> "de"``."""
    parts = PurePosixPath(path).parts
    if "LC_MESSAGES" in parts and parts.index("LC_MESSAGES") > 0:
        return parts[parts.index("LC_MESSAGES") - 1]
    return PurePosixPath(path).stem


def _aligned(records, languages: list[str], source_format: str) -> ParallelText:
    """Keep the records that have a non-empty text in every language; count the others."""
    lines: dict[str, list[str]] = {language: [] for language in languages}
    dropped = 0
    for record in records:
        texts = [_one_line(record.get(lang)) if record else "" for lang in languages]
        if not all(texts):
            dropped += 1
            continue
        for language, text in zip(languages, texts):
            lines[language].append(text)
    if not lines[languages[0]]:
        raise ValueError(f"no line is present in every language ({dropped} lines dropped): "
                         f"nothing is aligned")
    return ParallelText(lines=lines, source_format=source_format, dropped=dropped)


def _one_line(text) -> str:
    """``_one_line(" a\\nb ") -> "a b"``; None -> ``""``."""
    return " ".join(text.split()) if text else ""


def _check_languages(languages: list[str], where: str) -> None:
    if len(languages) < 2:
        raise ValueError(f"{where}: a parallel set needs at least two languages")
    repeated = [name for name, n in Counter(languages).items() if n > 1]
    if repeated or not all(languages):
        raise ValueError(f"{where}: each language is named once (repeated or empty: "
                         f"{', '.join(repeated) or 'an empty name'})")


def _utf8(data: bytes, name: str) -> str:
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise ValueError(f"{name} line {line}: not UTF-8") from None
