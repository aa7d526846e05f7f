"""Trying a custom pattern on adversarial inputs before it is stored.

A pattern with nested or overlapping repetitions (``(?:(?:x|x)+)+y``, ``(a+)+$``) splits most
text at once and a few texts in exponential time: a long run of a character it repeats, where
the match almost succeeds. A sample of a corpus rarely holds such a run; an encode request can.
So before a custom pattern is stored (a run submitted, a tokenizer imported), ``check_pattern``
splits long runs of each character the pattern writes literally and of a representative of each
class of characters (letters, ASCII and not; digits; spaces; punctuation; symbols), alone and
followed by a character of another class, and a few mixed texts. A split that takes longer than
``INPUT_SECONDS``, or all of them together longer than ``CHECK_SECONDS`` (processor seconds of
the thread that checks: other requests served at the same time are not counted), refuses the
pattern and names the input. A good pattern passes in well under a second; named patterns are
not tried.
"""

from __future__ import annotations

from collections.abc import Iterator

import regex

from ..errors import Invalid
from .match_budget import Budget, thread_matches, thread_seconds
from .pretokenize import PreTokenizer

RUN_CHARS = 3_000  # a run this long: exponential patterns never end, quadratic ones take long
INPUT_SECONDS = 0.25  # processor seconds one input may take to split
CHECK_SECONDS = 2.0  # ... and all of them together
MOST_LITERALS = 24  # literal characters of the pattern tried (the first ones written)
# one character of each class a pattern may name: ASCII and other letters, digits, spaces,
# punctuation (the apostrophe of contractions, the underscore of \w), symbols, a control
# character, one above the Basic Multilingual Plane
REPRESENTATIVES = "aZéя中1٣ \t\n\u00a0.,!'-_\"(€\x01😀"
MIXED = ["a ", "a1", "a.", "1.", " .", "\r\n", "a\n", "'s", "é ", "a_"]
SAMPLE = "Hello, world! It's 2024: naïve café, 東京, Москва; x_y = 42 (ok?)\n\tdone...  "
# what in a pattern's source is syntax, not a literal character: escapes (of which the ones
# that write a character are captured), group openings such as (?: (?P<name> (?i) (?<=, and
# counted repetitions such as {1,3}
_SYNTAX = regex.compile(
    r"\\(?:[pPN]\{[^}]*\}|[pP][A-Za-z]|x\{(?P<hex>[0-9A-Fa-f]+)\}|x(?P<hex>[0-9A-Fa-f]{2})"
    r"|u(?P<hex>[0-9A-Fa-f]{4})|U(?P<hex>[0-9A-Fa-f]{8})|(?P<control>[ntrfva])|[0-9A-Za-z]"
    r"|(?P<char>.))"
    r"|\(\?(?:P?<\w+>|P=\w+\)|<?[=!]|>|\#[^)]*\)|[a-zA-Z-]*:?\)?)|\{\d*,?\d*\}", regex.S)
_CONTROLS = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}
_META = set("^$.|?*+()[]{}")


def check_pattern(pattern: str) -> None:
    """Refuse (``Invalid``, field ``pattern``) a custom pattern that takes too long to split an
    adversarial input; named patterns pass at once.

    ``check_pattern(r"\\w+|\\W+")`` passes; ``check_pattern(r"(?:(?:x|x)+)+y|[\\s\\S]")`` raises
    "pattern ... took over 0.25 s to split a run of 3,000 'x': it backtracks without end ...".
    """
    pretokenizer = PreTokenizer(pattern)
    if not pretokenizer.checked:
        return
    deadline = thread_seconds() + CHECK_SECONDS  # this thread's: not other requests' work
    for tried, (what, text) in enumerate(adversarial_inputs(pretokenizer.pattern), 1):
        left = deadline - thread_seconds()
        try:
            if left <= 0:
                raise TimeoutError
            for _ in thread_matches(pretokenizer.regex, text, Budget(min(INPUT_SECONDS, left),
                                                                     what)):
                pass
        except TimeoutError:
            raise Invalid(_refusal(pattern, what, tried, left), field="pattern") from None


def _refusal(pattern: str, what: str, tried: int, left: float) -> str:
    took = (f"took over {INPUT_SECONDS:g} s to split {what}" if left > INPUT_SECONDS else
            f"took over {CHECK_SECONDS:g} s in all to split {tried} adversarial inputs "
            f"(up to {what})")
    return (f"pattern {pattern!r} {took}: it backtracks without end on such text; simplify it "
            f"(no nested or overlapping repetitions such as (a|a)+)")


def adversarial_inputs(pattern: str) -> Iterator[tuple[str, str]]:
    """``(description, text)`` pairs, the likeliest traps first: runs of the pattern's literal
    characters, then of a representative of each class, each alone and followed by a character
    of another class; then mixed texts.

    ``next(adversarial_inputs("x+y|."))[0] -> "a run of 3,000 'x'"``.
    """
    for char in dict.fromkeys(literal_characters(pattern) + list(REPRESENTATIVES)):
        run = f"a run of {RUN_CHARS:,} {char!r}"
        yield run, char * RUN_CHARS
        other = "!" if char.isalnum() else "a"
        yield f"{run} followed by {other!r}", char * RUN_CHARS + other
    for pair in MIXED:
        text = pair * (RUN_CHARS // len(pair))
        yield f"{pair!r} repeated to {len(text):,} characters", text
        yield f"{pair!r} repeated to {len(text):,} characters followed by '\\x00'", text + "\x00"
    yield "a mixed sample text", SAMPLE * (RUN_CHARS // len(SAMPLE))


def literal_characters(pattern: str) -> list[str]:
    """The characters a pattern's source writes literally (escapes resolved, metacharacters and
    named classes left out), in order, at most ``MOST_LITERALS``:

    ``literal_characters(r"(?:(?:x|x)+)+y|\\.|\\x41|\\p{L}") -> ['x', 'y', '.', 'A']``.
    """
    found: dict[str, None] = {}
    position = 0
    for syntax in _SYNTAX.finditer(pattern):
        found.update(dict.fromkeys(c for c in pattern[position:syntax.start()] if c not in _META))
        found.update(dict.fromkeys(_written(syntax)))
        position = syntax.end()
    found.update(dict.fromkeys(c for c in pattern[position:] if c not in _META))
    return list(found)[:MOST_LITERALS]


def _written(syntax: regex.Match) -> str:
    """The character a piece of syntax writes: ``\\.`` -> ``.``, ``\\x41`` -> ``A``; '' for a
    class such as ``\\w`` or ``\\p{L}``, a group opening or a counted repetition."""
    if syntax.group("hex"):
        code = int(syntax.group("hex"), 16)
        return chr(code) if code < 0x110000 else ""
    if syntax.group("control"):
        return _CONTROLS[syntax.group("control")]
    return syntax.group("char") or ""
