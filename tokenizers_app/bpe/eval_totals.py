"""Mergeable totals of an evaluation: every metric of ``metrics.metrics_of`` is computed from
them, and the totals of two parts of a corpus (cut where no token can cross, ``cut_allowed``)
merged give the totals of the whole.

- ``counts``: sums (bytes, chars, tokens, lines, words, split_words, own_words, covered_words,
  lossless_lines, unknown_chars, multibyte_chars, cut_chars, byte_fallback_chars);
- ``ids``: token count per id;
- ``words``: the distinct own words (as the kind counts word coverage: pre-tokens for
  byte-level BPE, words for the others), each with ``[count, covered]``;
- ``seconds``: time spent in the encoder (for the throughput, a timing, not a total to compare).

``merge`` adds another's; ``to_json`` / ``from_json`` store a part's totals as a file.
"""

from __future__ import annotations

import json
from collections import Counter

from .metrics import metrics_of, share

# the cut rules (where a corpus may be cut into parts and pieces without changing a token):
BYTE_LEVEL_LINES = "byte_level_lines"  # after "X\n" (X not space) before a non-space character
LINES = "lines"  # after any newline
BLANK_LINES = "blank_lines"  # after a blank line: an engine's documents are paragraphs
NONE = "none"  # never (a byte-level pattern of its own: a pre-token may cross any line)


class EvalTotals:
    def __init__(self):
        self.counts: Counter[str] = Counter()
        self.ids: Counter[int] = Counter()
        self.words: dict[str, list] = {}
        self.seconds = 0.0
        # (distinct, covered) of words merged from files without holding them
        # (``eval_words.distinct_words``); ``None``: counted from ``words``
        self.distinct: tuple[int, int] | None = None

    def add_word(self, word: str, count: int, covered: bool) -> None:
        found = self.words.get(word)
        if found is None:
            self.words[word] = [count, bool(covered)]
        else:
            found[0] += count

    def merge(self, other: EvalTotals) -> EvalTotals:
        self.counts.update(other.counts)
        self.ids.update(other.ids)
        for word, (count, covered) in other.words.items():
            self.add_word(word, count, covered)
        self.seconds += other.seconds
        return self

    def comparable(self) -> tuple:
        """Everything but the timing: what equal evaluations share."""
        return (dict(+self.counts), dict(+self.ids),
                {word: tuple(value) for word, value in self.words.items()})

    def metrics(self, tokenizer, has_unknown: bool | None = None,
                byte_fallback: bool = False) -> dict:
        """The metrics dict (``metrics_of``); an engine's own rates: ``has_unknown`` False
        drops the unknown rate, ``byte_fallback`` adds the byte-fallback rate of its pieces."""
        totals = Counter(self.counts)
        distinct, covered = self.distinct or (
            len(self.words), sum(1 for _, covered in self.words.values() if covered))
        totals.update(distinct_own_words=distinct, distinct_covered_words=covered)
        result = metrics_of(tokenizer, totals, self.ids, self.seconds)
        if has_unknown is False:
            result.pop("unknown_rate", None)
        if byte_fallback:
            result["byte_fallback_rate"] = share(totals["byte_fallback_chars"], totals["chars"])
        return result

    def to_json(self) -> bytes:
        return json.dumps({"counts": self.counts, "ids": list(self.ids.items()),
                           "words": self.words, "seconds": self.seconds},
                          ensure_ascii=False).encode()

    @classmethod
    def from_json(cls, data: bytes | str | dict) -> EvalTotals:
        found = json.loads(data) if isinstance(data, (bytes, str)) else data
        totals = cls()
        totals.counts.update(found["counts"])
        totals.ids.update({int(i): n for i, n in found["ids"]})
        totals.words = {word: [count, bool(covered)]
                        for word, (count, covered) in found["words"].items()}
        totals.seconds = float(found.get("seconds", 0.0))
        return totals


def cut_allowed(rule: str, before: str, after: str) -> bool:
    """Whether the text may be cut between the line ``before`` (ending in a newline) and the
    line ``after`` under ``rule``: ``cut_allowed(LINES, "a\\n", " b") -> True``;
    ``cut_allowed(BYTE_LEVEL_LINES, "a\\n", " b") -> False``."""
    if not before.endswith("\n") or not after:
        return False
    if rule == LINES:
        return True
    if rule == BYTE_LEVEL_LINES:
        return len(before) >= 2 and not before[-2].isspace() and not after[0].isspace()
    if rule == BLANK_LINES:
        return before in ("\n", "\r\n")
    return False
