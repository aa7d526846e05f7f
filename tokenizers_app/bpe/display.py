"""Tokens as text a person can read: bytes that are not UTF-8 as ``<0xNN>``, whitespace and
control characters made visible. Used wherever a token is shown (pages, API JSON, CLI).

The convention: a space is ``·``, a newline ``↵``, a tab ``→``, a carriage return ``␍``; any
other whitespace or control character is ``<U+XXXX>``; a byte that is not part of valid UTF-8 is
``<0xNN>``. ``token_segments`` says which part is which, so a page can style the escapes apart
from literal text (a literal ``·`` or ``<0x41>`` in a token stays distinguishable there). A
character-level token's end-of-word suffix (``</w>``) is its own segment, ``wordend``, so a page
shows it as a word end rather than as text (or markup).
"""

from __future__ import annotations

import unicodedata

VISIBLE = {" ": ("·", "space"), "\n": ("↵", "newline"), "\t": ("→", "tab"),
           "\r": ("␍", "newline")}
Segment = tuple[str, str]  # (shown text, kind: text, space, newline, tab, control, byte, wordend)


def token_segments(token: bytes, word_end: str = "") -> list[Segment]:
    """``token_segments(b" hi\\xe4") -> [("·", "space"), ("hi", "text"), ("<0xE4>", "byte")]``;
    with a character-level BPE's ``word_end``: ``token_segments(b"lo</w>", "</w>") ->
    [("lo", "text"), ("</w>", "wordend")]``."""
    text = bytes(token).decode("utf-8", "surrogateescape")
    if word_end and text.endswith(word_end) and text != word_end:
        return _segments(text[:-len(word_end)]) + [(word_end, "wordend")]
    return _segments(text)


def _segments(text: str) -> list[Segment]:
    segments: list[Segment] = []
    for char in text:
        shown, kind = _show(char)
        if segments and kind == "text" and segments[-1][1] == "text":
            segments[-1] = (segments[-1][0] + shown, kind)
        else:
            segments.append((shown, kind))
    return segments


def token_text(token: bytes) -> str:
    """``token_text(b" hello\\n") -> "·hello↵"``; ``token_text(b"\\xe4\\xbd") ->
    "<0xE4><0xBD>"`` (half a character); ``token_text("日本".encode()) -> "日本"``."""
    return "".join(shown for shown, _ in token_segments(token))


def tokens_text(tokens) -> str:
    """Special tokens (strings) or tokens (bytes) on one line, each shown as ``token_text`` shows
    it, so a space inside one is ``·`` and the spaces between them part them:
    ``tokens_text(["<s>", "a b", "\u202e"]) -> "<s> a·b <U+202E>"``; no token: ``"none"``."""
    shown = [token_text(t.encode() if isinstance(t, str) else t) for t in tokens]
    return " ".join(shown) or "none"


def _show(char: str) -> Segment:
    if char in VISIBLE:
        return VISIBLE[char]
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8 (surrogateescape)
        return f"<0x{code - 0xDC00:02X}>", "byte"
    if char.isspace() or unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp", "Cs"):
        return f"<U+{code:04X}>", "control"
    return char, "text"
