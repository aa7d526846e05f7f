"""What a corpus holds, learned while its bytes stream past: lines, characters, and the share of
letters per Unicode script (of the first ``SCRIPT_SAMPLE_CHARS`` characters)."""

from __future__ import annotations

from collections import Counter

import regex

SCRIPT_SAMPLE_CHARS = 16 << 20  # the script summary looks at the first 16M characters
SCRIPTS = ("Latin", "Cyrillic", "Greek", "Arabic", "Hebrew", "Devanagari", "Thai", "Han",
           "Hiragana", "Katakana", "Hangul")
# letters of each script (a combining mark has a script too, but is no letter)
_SCRIPT_RES = [(name, regex.compile(rf"(?V1)[\p{{L}}&&\p{{Script={name}}}]+")) for name in SCRIPTS]
_LETTERS = regex.compile(r"\p{L}+")


class CorpusStats:
    """Lines, characters and letters per Unicode script of a text seen block by block.

    ``stats = CorpusStats(); stats.add("ab\\nжж"); stats.summary() -> {"line_count": 2,
    "char_count": 5, "scripts": {"Latin": 0.5, "Cyrillic": 0.5}}``
    """

    def __init__(self):
        self.lines = self.chars = 0
        self.last = ""
        self.letters: Counter[str] = Counter()

    def add(self, text: str) -> None:
        if not text:
            return
        self.lines += text.count("\n")
        self.chars += len(text)
        self.last = text[-1]
        if self.chars <= SCRIPT_SAMPLE_CHARS:
            self.letters["all"] += sum(map(len, _LETTERS.findall(text)))
            for script, pattern in _SCRIPT_RES:
                self.letters[script] += sum(map(len, pattern.findall(text)))

    def summary(self) -> dict:
        """``{"line_count": .., "char_count": .., "scripts": {"Latin": 0.97, "other": 0.03}}``;
        a last line without a newline counts."""
        letters = Counter(self.letters)
        total = letters.pop("all", 0)
        scripts = {s: round(n / total, 4) for s, n in letters.most_common() if n}
        other = total - sum(letters.values())
        if total and other:
            scripts["other"] = round(other / total, 4)
        lines = self.lines + (self.last not in ("", "\n"))
        return {"line_count": lines, "char_count": self.chars, "scripts": scripts}
