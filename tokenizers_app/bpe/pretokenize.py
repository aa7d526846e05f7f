"""Pre-tokenization: named split patterns and safe chunking.

A *pattern* cuts text into pre-tokens; merges never cross a pre-token boundary. Special tokens are
cut out before the pattern runs, longest match first at any position (``special_tokens``). A
custom pattern's matching is bounded in time: ``MATCH_SECONDS`` per text it splits, or what is
left of the caller's budget (``match_budget``); past it, ``PatternTooSlow``.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Iterable, Iterator

import regex

from ..errors import Invalid
from .compiled import gpt2_split
from .match_budget import Budget, PatternTooSlow, current_budget, thread_matches, too_slow
from .special_tokens import special_regex

GPT2_PATTERN = (
    r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
)
GPT4_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*"""
    r"""|\s*[\r\n]|\s+(?!\S)|\s+"""
)
O200K_PATTERN = "|".join([  # o200k_base's regex (tiktoken's encoding of that name)
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"""
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"""
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""",
    r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
    r"""\s*[\r\n]+""",
    r"""\s+(?!\S)""",
    r"""\s+""",
])
NAMED_PATTERNS: dict[str, str | None] = {"gpt2": GPT2_PATTERN, "gpt4": GPT4_PATTERN,
                                         "o200k": O200K_PATTERN, "none": None}

# The named patterns again, for the standard library's `re`, with \p{L}, \p{N} and \s written
# out as classes of the characters `regex` puts in them, restricted to the Basic Multilingual
# Plane: `re` runs these faster than `regex` runs the originals (bench/HISTORY.md), but only on
# text without characters above U+FFFF (which go to `regex`). A run that ends its alternative is
# possessive (``++``), which changes nothing but the speed. An optional leading character is
# written as two alternatives, one without it and one with it (`` ?x`` as ``x| x``): `re` skips an
# alternative whose first character cannot match without entering it, which makes the split
# faster. Equality with `regex` over every BMP character is tested in
# tests/bpe/test_pretokenize.py. In gpt2, letters come first: they are the most common, and no
# other alternative can start where they do.
_BMP_TEMPLATES = {
    "gpt2": r"""[{L}]++| [{L}]++|[{N}]++| [{N}]++|'(?:[st]|re|ve|m|ll|d)|[^{S}{L}{N}]++"""
            r"""| [^{S}{L}{N}]++|[{S}]+(?![^{S}])|[{S}]+""",
    "gpt4": r"""'(?i:[sdmt]|ll|ve|re)|[{L}]+|[^\r\n{L}{N}][{L}]+|[{N}]{{1,3}}"""
            r"""|[^{S}{L}{N}]++[\r\n]*| [^{S}{L}{N}]++[\r\n]*|[{S}]*[\r\n]|[{S}]+(?![^{S}])|[{S}]+""",
}
_ABOVE_BMP = re.compile("[\U00010000-\U0010ffff]")
MATCH_SECONDS = 60.0  # the most a custom pattern may take over one text (regex's timeout)

# A cut after a lone "\n" between two non-space characters is a pre-token boundary for both named
# patterns, whatever follows: see `iter_chunks` and tests/bpe/test_pretokenize.py.
LINE_CUT = r"(?<=\S\n)(?=\S)"
_LAST_LINE_CUT = regex.compile("(?r)" + LINE_CUT)


def pattern_regex(pattern: str) -> str | None:
    """The regex source for a pattern name (``gpt2``, ``gpt4``, ``o200k``, ``none``) or a custom
    regex.

    ``pattern_regex("none") -> None``; ``pattern_regex(r"\\w+|\\W+") -> r"\\w+|\\W+"``.
    """
    if pattern in NAMED_PATTERNS:
        return NAMED_PATTERNS[pattern]
    if not isinstance(pattern, str) or not pattern:
        raise Invalid(f"pattern must be 'gpt2', 'gpt4', 'o200k', 'none' or a regex, got {pattern!r}",
                      field="pattern")
    if "\x00" in pattern:
        raise Invalid(f"pattern {pattern!r} holds a NUL character; write it as \\x00",
                      field="pattern")
    try:
        regex.compile(pattern)
    except regex.error as exc:
        raise Invalid(f"pattern {pattern!r} does not compile: {exc}", field="pattern") from None
    return pattern


def pattern_name(pattern: str) -> str:
    """The short name of a pattern given by name or by regex source (custom when unknown)."""
    for name, source in NAMED_PATTERNS.items():
        if pattern in (name, source):
            return name
    return pattern


class PreTokenizer:
    """Splits text into pre-tokens with one pattern.

    ``PreTokenizer("gpt2").split("Hello world!") -> ['Hello', ' world', '!']``
    """

    def __init__(self, pattern: str = "gpt2"):
        self.pattern = pattern_name(pattern)
        source = pattern_regex(pattern)
        self.regex = regex.compile(source) if source is not None else None
        self.checked = self.pattern not in NAMED_PATTERNS  # custom regexes must prove lossless
        self._bmp = self.pattern if self.pattern in _BMP_TEMPLATES else None
        self._scan = gpt2_split if self.pattern == "gpt2" else None  # compiled, when built

    def compile(self) -> PreTokenizer:
        """Build the patterns now rather than on first use (before forking workers, say)."""
        if self._bmp is not None:
            bmp_regex(self._bmp)
        if self._scan is not None:
            character_classes()
        return self

    def _matcher(self, text: str):
        """The compiled pattern for ``text``: `re`'s BMP version of a named pattern when the text
        has no character above U+FFFF, else `regex`'s."""
        if self._bmp is not None and (text.isascii() or _ABOVE_BMP.search(text) is None):
            return bmp_regex(self._bmp)
        return self.regex

    def split(self, text: str) -> list[str]:
        if not text:
            return []
        if self.regex is None:
            return [text]
        if self._scan is not None:
            return self._scan(text, character_classes())
        if not self.checked:
            return self._matcher(text).findall(text)
        return [p for batch in self.iter_split(text, batch=len(text) + 1) for p in batch]

    def iter_split(self, text: str, batch: int = 1 << 16) -> Iterator[list[str]]:
        """``split(text)`` in batches of about ``batch`` pre-tokens, for very long texts."""
        if self.regex is None or not text:
            yield self.split(text)
            return
        pretokens, end = [], 0
        matches = self._custom_matches(text) if self.checked else self._matcher(text).finditer(text)
        for match in matches:
            if self.checked and match.start() != end:
                raise ValueError(f"pattern {self.pattern!r} is not lossless: "
                                 f"{_gap_at(text, end)}")
            end = match.end()
            if match.end() > match.start():
                pretokens.append(match.group())
            if len(pretokens) >= batch:
                yield pretokens
                pretokens = []
        if self.checked and end != len(text):
            raise ValueError(f"pattern {self.pattern!r} is not lossless: {_gap_at(text, end)}")
        yield pretokens

    def _custom_matches(self, text: str):
        """A custom pattern's matches over ``text``, bounded by ``MATCH_SECONDS`` in all, or by
        what is left of the caller's budget, which they spend."""
        budget = current_budget()
        if budget is None:
            yield from self._timed_matches(text)
            return
        if budget.left <= 0:
            raise too_slow(self.pattern, text, budget)
        with budget.gate.slot() if budget.gate else contextlib.nullcontext():
            try:
                yield from thread_matches(self.regex, text, budget)
            except TimeoutError:
                raise too_slow(self.pattern, text, budget) from None

    def _timed_matches(self, text: str):
        try:
            yield from self.regex.finditer(text, timeout=MATCH_SECONDS, concurrent=True)
        except TimeoutError:
            raise PatternTooSlow(
                f"pattern {self.pattern!r} took over {MATCH_SECONDS:g} s to split "
                f"{len(text):,} characters: it backtracks without end on this text; simplify it "
                f"(no nested or overlapping repetitions)") from None

    def check_sample(self, text: str, where: str, seconds: float = 2.0) -> None:
        """Raise ``Invalid`` (field ``pattern``), naming ``where``, when a custom pattern takes
        over ``seconds`` to split ``text`` (catastrophic backtracking) or is not lossless on it.
        Named patterns are known to be fast and lossless; they pass at once."""
        if not self.checked or not text:
            return
        try:
            gap = self._gap(text, seconds)
        except TimeoutError:
            raise Invalid(
                f"pattern {self.pattern!r} took over {seconds:g} s to split the first "
                f"{len(text.encode())} bytes of {where}: it backtracks without end on this "
                f"text; simplify it (no nested or overlapping repetitions such as (a|a)+)",
                field="pattern") from None
        if gap:
            raise Invalid(f"pattern {self.pattern!r} is not lossless on {where}: {gap}",
                          field="pattern")

    def _gap(self, text: str, timeout: float | None = None) -> str:
        """Where the pattern's matches first skip text ('' when they cover it all), within
        ``timeout`` processor seconds of this thread (``TimeoutError`` past them)."""
        end = 0
        matches = self.regex.finditer(text) if timeout is None else \
            thread_matches(self.regex, text, Budget(timeout, ""))
        for match in matches:
            if match.start() != end:
                break
            end = match.end()
        return "" if end == len(text) else _gap_at(text, end)

    @property
    def line_cuts(self) -> bool:
        """Whether chunks may be cut at lines (proven only for the named regex patterns)."""
        return self.pattern in ("gpt2", "gpt4")


def _gap_at(text: str, end: int) -> str:
    """Where a pattern's matches, covering ``text`` up to ``end``, skip text."""
    return f"its matches skip the text at character offset {end}: {text[end:end + 20]!r}"


@functools.cache
def bmp_regex(name: str) -> re.Pattern:
    """`re`'s version of the named pattern ``name`` for text within the BMP (built on first
    use)."""
    bmp = "".join(map(chr, range(0x10000)))
    classes = {key: _class_body(regex.findall(prop, bmp))
               for key, prop in (("L", r"\p{L}"), ("N", r"\p{N}"), ("S", r"\s"))}
    return re.compile(_BMP_TEMPLATES[name].format(**classes))


@functools.cache
def character_classes() -> bytes:
    """The class of every code point as `regex` reads the named patterns, for the compiled
    gpt2 scanner (``compiled.gpt2_split``): 1 letter (``\\p{L}``), 2 number (``\\p{N}``), 4
    space (``\\s``), 0 anything else. Built on first use."""
    everything = "".join(map(chr, range(0x110000)))
    table = bytearray(len(everything))
    for bit, run in ((1, r"\p{L}+"), (2, r"\p{N}+"), (4, r"\s+")):
        for match in regex.finditer(run, everything):
            table[match.start():match.end()] = bytes([bit]) * (match.end() - match.start())
    return bytes(table)


def _class_body(chars: list[str]) -> str:
    """The body of a character class holding exactly ``chars`` (in code point order), as
    ranges: ``_class_body(["a", "b", "c", "x"]) -> "a-cx"``."""
    spans: list[list[int]] = []
    for code in map(ord, chars):
        if spans and code == spans[-1][1] + 1:
            spans[-1][1] = code
        else:
            spans.append([code, code])
    return "".join(re.escape(chr(low)) if low == high else
                   f"{re.escape(chr(low))}-{re.escape(chr(high))}" for low, high in spans)


def iter_chunks(
    blocks: Iterable[str],
    special_tokens: Iterable[str] = (),
    line_cuts: bool = True,
    chunk_chars: int = 1 << 20,
) -> Iterator[str]:
    """Re-cut a stream of text blocks into chunks that pre-tokenize independently.

    Pre-tokenizing each chunk gives exactly the pre-tokens of the whole stream. A chunk ends
    right after a special token, or (``line_cuts``) after a lone newline between two non-space
    characters: ``"ab\\ncd"`` may be cut as ``"ab\\n" | "cd"``. No cut is made where a special token
    could still be completed by the next block. Without a safe cut the chunk keeps growing.
    """
    special = special_regex(special_tokens)
    longest = max((len(t) for t in special_tokens), default=0)
    buffer = ""
    for block in blocks:
        buffer += block
        if len(buffer) < chunk_chars:
            continue
        cut = _safe_cut(buffer, special, longest, line_cuts)
        if cut:
            yield buffer[:cut]
            buffer = buffer[cut:]
    if buffer:
        yield buffer


def _safe_cut(buffer: str, special: regex.Pattern | None, longest: int, line_cuts: bool) -> int:
    """The last position in ``buffer`` where the stream may be cut (0 when there is none)."""
    limit = len(buffer) - longest  # a special token starting after this may be incomplete
    spans = [m.span() for m in special.finditer(buffer)] if special else []
    spans = [span for span in spans if span[0] <= limit]
    cut = spans[-1][1] if spans else 0
    if line_cuts:
        match = _LAST_LINE_CUT.search(buffer, cut, max(cut, limit - 1))
        if match and not any(start < match.start() < end for start, end in spans):
            cut = max(cut, match.start())
    return cut
