"""Special tokens: checking a list of them, which ones a call allows, and cutting them out of a
text (longest match first at any position) before the pattern runs."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import regex

from ..errors import Invalid, TooLarge

# What a call's allowed_special / disallowed_special may hold beyond the special tokens themselves
# (strings that are not special tokens: tiktoken refuses text holding a disallowed one too).
EXTRA_SPECIAL_STRINGS = 64
EXTRA_SPECIAL_CHARS = 4_096


def check_special_tokens(special_tokens: Iterable[str]) -> list[str]:
    """Validate a list of special tokens: non-empty strings, no duplicates (else ``Invalid``,
    field ``special_tokens``)."""
    tokens = list(special_tokens or [])
    seen = set()
    for token in tokens:
        if not isinstance(token, str) or token == "":
            raise Invalid(f"special tokens must be non-empty strings, got {token!r}",
                          field="special_tokens")
        if "\x00" in token:
            raise Invalid(f"special token {token!r} holds a NUL character",
                          field="special_tokens")
        if token in seen:
            raise Invalid(f"special token {token!r} is listed twice", field="special_tokens")
        seen.add(token)
    return tokens


def allowed_special_tokens(special_tokens: list[str], allowed_special) -> list[str]:
    """The special tokens that ``allowed_special`` (a set, or ``"all"``) allows, in list order:
    ``allowed_special_tokens(["<a>", "<b>"], {"<b>", "<c>"}) -> ["<b>"]``."""
    if allowed_special == "all":
        return list(special_tokens)
    allowed = set(allowed_special)
    return [t for t in special_tokens if t in allowed]


def check_special_lists(special_tokens: list[str], **lists) -> None:
    """Raise ``TooLarge`` (field: the list's name) when a list of special-token strings
    (``allowed_special=[...]``, ``disallowed_special=[...]``; ``"all"`` is always fine) holds
    more than the ``special_tokens`` plus ``EXTRA_SPECIAL_STRINGS``, or strings that are not
    special tokens of more than ``EXTRA_SPECIAL_CHARS`` characters in all: the work of a call
    then stays linear in what the tokenizer holds, not in what a caller sends.

    ``check_special_lists(["<s>"], disallowed_special=["<s>", "x"])`` passes;
    ``check_special_lists([], disallowed_special=["x"] * 65)`` raises "disallowed_special holds
    65 strings; this tokenizer takes at most 64 (its 0 special tokens and 64 others)".
    """
    known = set(special_tokens)
    most = len(known) + EXTRA_SPECIAL_STRINGS
    for name, strings in lists.items():
        if strings == "all":
            continue
        if len(strings) > most:
            raise TooLarge(f"{name} holds {len(strings):,} strings; this tokenizer takes at most "
                           f"{most:,} (its {len(known):,} special tokens "
                           f"and {EXTRA_SPECIAL_STRINGS} others)", field=name)
        others = sum(len(s) for s in strings if s not in known)
        if others > EXTRA_SPECIAL_CHARS:
            raise TooLarge(f"{name} holds {others:,} characters of strings that are not special "
                           f"tokens of this tokenizer; it takes at most {EXTRA_SPECIAL_CHARS:,}",
                           field=name)


def check_allowed_special(special_tokens: list[str], allowed_special, disallowed_special,
                          text: str) -> list[str]:
    """The allowed special tokens; raises ``ValueError`` when ``text`` holds a disallowed one
    (``disallowed_special="all"``: every one not allowed), as tiktoken does.

    ``check_allowed_special(["<s>"], set(), (), "a<s>") -> []`` (``"<s>"`` is plain text);
    ``check_allowed_special(["<s>"], set(), "all", "a<s>")`` raises ``ValueError``.
    """
    allowed = allowed_special_tokens(special_tokens, allowed_special)
    if disallowed_special == "all":
        disallowed = [t for t in special_tokens if t not in allowed]
    else:
        disallowed = list(disallowed_special)
    found = special_regex(disallowed).search(text) if disallowed else None
    if found:
        raise ValueError(
            f"text holds the special token {found.group()!r}, which is not allowed; pass "
            f"allowed_special={{{found.group()!r}}} to encode it as a special token, or an "
            f"empty disallowed_special (() in Python, [] in JSON) to encode it as plain text")
    return allowed


def special_regex(special_tokens: Iterable[str]) -> regex.Pattern | None:
    """A regex matching any special token, the longest one first at a given position."""
    tokens = sorted(set(special_tokens), key=lambda t: (-len(t), t))
    if not tokens:
        return None
    return regex.compile("|".join(regex.escape(t) for t in tokens))


def split_special(text: str, special: regex.Pattern | None) -> Iterator[tuple[str, bool]]:
    """Yield ``(segment, is_special)`` in order; empty text pretokens are skipped.

    ``split_special("a<|e|>b", special_regex(["<|e|>"])) -> ("a", False), ("<|e|>", True),
    ("b", False)``
    """
    if special is None:
        if text:
            yield text, False
        return
    start = 0
    for match in special.finditer(text):
        if match.start() > start:
            yield text[start:match.start()], False
        yield match.group(), True
        start = match.end()
    if start < len(text):
        yield text[start:], False
