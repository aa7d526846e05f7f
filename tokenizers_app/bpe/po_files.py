"""Reading gettext ``.po`` files: each translated message as ``(context, msgid) -> msgstr``.

A message's strings may be spread over several quoted lines (joined); C escapes are read
(``\\n \\t \\" \\\\`` and the rest, octal and ``\\x``); the file is decoded in the charset its
header names (UTF-8 when it names none). Plural messages, empty translations, fuzzy ones and
obsolete (``#~``) ones are skipped and counted by reason. Anything else malformed raises
``ValueError`` naming the file's line.
"""

from __future__ import annotations

import codecs
from collections import Counter
from dataclasses import dataclass, field

import regex

_CHARSET = regex.compile(rb"charset=([A-Za-z0-9_.:-]+)")
_KEYWORD = regex.compile(r"(msgctxt|msgid_plural|msgid|msgstr(?:\[\d+\])?)\s+(\".*)")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "a": "\a", "b": "\b",
            "f": "\f", "v": "\v", "'": "'", "?": "?"}
_ESCAPE = regex.compile(r"\\(?:([0-7]{1,3})|x([0-9A-Fa-f]{1,2})|(.))")


@dataclass
class PoFile:
    """What one file holds: ``messages[(context, msgid)] = msgstr``, the header's language (""
    when it names none) and the count of messages skipped, by reason."""

    messages: dict[tuple[str, str], str] = field(default_factory=dict)
    language: str = ""
    skipped: Counter = field(default_factory=Counter)


def read_po(data: bytes, name: str = "file") -> PoFile:
    """``read_po(b'msgid "Yes"\\nmsgstr "Ja"\\n').messages -> {("", "Yes"): "Ja"}``."""
    text = _decode(data, name)
    result = PoFile()
    for entry in _entries(text, name):
        _add(result, entry, name)
    return result


def _decode(data: bytes, name: str) -> str:
    """The file's text in the charset its header names; a byte that is not of it raises
    ``ValueError`` naming its line."""
    found = _CHARSET.search(data[:4096])
    charset = found.group(1).decode("ascii") if found else "utf-8"
    if charset.upper() == "CHARSET":  # the template's placeholder
        charset = "utf-8"
    try:
        codecs.lookup(charset)
    except LookupError:
        raise ValueError(f"{name}: the header names the charset {charset!r}, which is not "
                         f"known") from None
    try:
        return data.decode(charset).removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise ValueError(f"{name} line {line}: bytes that are not {charset} (the charset its "
                         f"header names)") from None


@dataclass
class _Entry:
    strings: dict[str, list[str]] = field(default_factory=dict)
    fuzzy: bool = False
    line: int = 0

    def has_msgstr(self) -> bool:
        return any(word.startswith("msgstr") for word in self.strings)


def _entries(text: str, name: str):
    """Each entry: its keywords' strings (continuations joined) and whether it is fuzzy."""
    entry, last = _Entry(), None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:  # a blank line ends the strings of an entry
            last = None
            continue
        if line.startswith("#~"):  # obsolete: kept by gettext only for history
            if entry.strings:
                yield entry
            entry, last = _Entry(), None
            if regex.match(r"#~\s*msgid\s", line):
                yield _Entry(strings={"obsolete": [""]}, line=number)
            continue
        if line.startswith("#"):
            if entry.has_msgstr():  # a comment after a msgstr starts the next entry
                yield entry
                entry, last = _Entry(), None
            entry.fuzzy |= line.startswith("#,") and "fuzzy" in line
            continue
        if line.startswith('"'):
            if last is None:
                raise ValueError(f"{name} line {number}: a quoted string that follows no "
                                 f"msgid or msgstr")
            entry.strings[last].append(_unquote(line, name, number))
            continue
        keyword = _KEYWORD.fullmatch(line)
        if keyword is None:
            raise ValueError(f"{name} line {number}: not a gettext line (expected msgctxt, "
                             f"msgid, msgid_plural, msgstr, a quoted string or a comment)")
        word = keyword.group(1)
        if word in ("msgctxt", "msgid") and entry.has_msgstr() or word in entry.strings:
            yield entry
            entry = _Entry()
        entry.line = entry.line or number
        entry.strings[word], last = [_unquote(keyword.group(2), name, number)], word
    if entry.strings:
        yield entry


def _unquote(quoted: str, name: str, number: int) -> str:
    """``_unquote('"a\\\\tb"', ...) -> "a\\tb"``; an unknown escape, a bare quote inside or a
    missing closing quote raises ``ValueError`` naming the line."""
    if len(quoted) < 2 or not quoted.startswith('"') or not quoted.endswith('"'):
        raise ValueError(f"{name} line {number}: a string must be in double quotes")
    inner, out, at = quoted[1:-1], [], 0
    while at < len(inner):
        char = inner[at]
        if char == '"':
            raise ValueError(f"{name} line {number}: a quote inside a string must be escaped "
                             f"(\\\")")
        if char != "\\":
            out.append(char)
            at += 1
            continue
        match = _ESCAPE.match(inner, at)
        if match is None:
            raise ValueError(f"{name} line {number}: the string ends inside an escape (its "
                             f"closing quote is escaped)")
        octal, hexa, escaped = match.groups()
        if escaped is not None and escaped not in _ESCAPES:
            raise ValueError(f"{name} line {number}: unknown escape \\{escaped}")
        out.append(chr(int(octal, 8)) if octal else chr(int(hexa, 16)) if hexa
                   else _ESCAPES[escaped])
        at = match.end()
    return "".join(out)


def _add(result: PoFile, entry: _Entry, name: str) -> None:
    """Keep a translated message; count what is skipped; read the header's language."""
    strings = {word: "".join(parts) for word, parts in entry.strings.items()}
    if "obsolete" in strings:
        result.skipped["obsolete"] += 1
        return
    if "msgid" not in strings:
        raise ValueError(f"{name} line {entry.line}: an entry without msgid")
    if strings["msgid"] == "" and "msgctxt" not in strings:  # the header
        header = strings.get("msgstr", "")
        for line in header.split("\n"):
            key, _, value = line.partition(":")
            if key.strip().lower() == "language":
                result.language = value.strip()
        return
    if "msgid_plural" in strings or any(word.startswith("msgstr[") for word in strings):
        result.skipped["plural forms"] += 1
    elif "msgstr" not in strings:
        raise ValueError(f"{name} line {entry.line}: msgid {strings['msgid'][:40]!r} has no "
                         f"msgstr")
    elif strings["msgstr"] == "":
        result.skipped["empty translations"] += 1
    elif entry.fuzzy:
        result.skipped["fuzzy translations"] += 1
    else:
        key = (strings.get("msgctxt", ""), strings["msgid"])
        result.messages.setdefault(key, strings["msgstr"])
