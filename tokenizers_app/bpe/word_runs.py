"""The runs of other characters than white space of each line, for character-level BPE's
evaluation (``totals.RunTotals.add_runs``), and what they give without any decode.

- ``line_runs``: each line's runs. Where the lines hold no U+001C-U+001F they are ``str.split``'s
  pieces, found in C (Python's white space is Unicode White_Space and those four separators, so
  its pieces are then exactly the runs of ``\\S`` of ``regex``, the tokenizers' word
  patterns' white space); else the runs of ``\\S`` themselves.
- ``plain_lossless``: a line whose runs each spell themselves and a space (``spelled[run] == run
  + " "``, the last token carrying the word-end suffix) decodes to its runs joined by a space
  (``decode`` drops the last space), so it comes back unchanged exactly when its text without
  its line end is its runs joined by one space: no white space but single spaces between runs.
  For ``str.split``'s runs that is one ``fullmatch`` (``re``'s ``\\S`` is Python's own
  non-white-space, ``str.split``'s).
- ``split_words``: the whitespace-separated words of ``str.split`` from counted runs (a run of
  ``\\S`` holding U+001C-U+001F is cut there).
"""

from __future__ import annotations

import re
from collections import Counter

import regex

ODD_SPACE = re.compile("[\x1c-\x1f]")  # Python's white space that is not Unicode White_Space
_RUNS = regex.compile(r"\S+")
_PLAIN_LINE = re.compile(r"(?:\S+(?: \S+)*)?(?:\r\n|\n)?")


def line_runs(lines: list[str], text: str) -> tuple[list[list[str]], bool]:
    """``(runs of each line, whether they are str.split's)``, ``text`` the lines joined:
    ``line_runs(["a b\\n"], "a b\\n") -> ([["a", "b"]], True)``."""
    if ODD_SPACE.search(text):
        return list(map(_RUNS.findall, lines)), False
    return list(map(str.split, lines)), True


def plain_lossless(line: str) -> bool:
    """Whether a line of runs that each spell themselves and a space (``str.split``'s runs)
    decodes to itself without its line end: ``plain_lossless("a b\\r\\n") -> True``,
    ``plain_lossless("a  b\\n") -> False``."""
    return _PLAIN_LINE.fullmatch(line) is not None


def split_words(run_counts: Counter[str]) -> Counter[str]:
    """The words ``str.split`` finds in text whose runs of ``\\S`` are counted in
    ``run_counts``: ``split_words(Counter({"a\\x1eb": 2, "a": 1})) -> Counter({"a": 3, "b":
    2})``."""
    words = Counter(run_counts)
    for run in [run for run in words if ODD_SPACE.search(run)]:
        count = words.pop(run)
        for word in run.split():
            words[word] += count
    return words
