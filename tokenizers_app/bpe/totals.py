"""The totals behind ``evaluation.evaluate``: C-level work per line, the rest once per distinct
item.

``Totals`` encodes the lines (timed) and keeps the totals; a subclass counts distinct items and
turns each one's facts, times its count, into totals at the end:

- ``pretoken_totals.PreTokenTotals`` for byte-level BPE: per distinct pre-token;
- ``RunTotals`` for every other tokenizer, which must encode each run of whitespace or of other
  characters on its own (character-level BPE and the baselines do): per distinct run.
  Character-level BPE that does not lowercase is not encoded line by line
  (``RunTotals.add_runs``): each distinct word's ids are found once (``char_merges``), and the
  lossless check decodes a line from its runs' spellings.

Plain twin: ``reference_evaluate`` in tests/bpe/reference.py (line by line), the oracle that
tests/bpe/test_evaluation.py checks both against.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Iterator
from itertools import chain

import regex

from . import word_runs
from .char_merges import compiled_word_ids
from .corpus import sized_groups
from .eval_totals import EvalTotals
from .metrics import BYTE_LEVEL, count_cut_characters, metrics_of, split_flags

GROUP_CHARS = 1 << 16  # lines are added in groups of about this many characters
RUN_RE = regex.compile(r"\S+|\s+")  # runs of whitespace or of other characters
_IS_WORD = regex.compile(r"\S")


class Totals:
    """Totals of one evaluation: ``add`` each of ``groups(items)``, then ``result(lines)``.
    The items are lines (``RunTotals``) or pieces of several lines (``PreTokenTotals``)."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self.byte_level = tokenizer.algorithm in BYTE_LEVEL
        self.special_ids = set(tokenizer.special_ids.values())
        self.totals: Counter[str] = Counter()
        self.seconds = 0.0

    def groups(self, lines: Iterable[str]) -> Iterator[list[str]]:
        """Consecutive lines, about ``GROUP_CHARS`` characters at a time."""
        return sized_groups(lines, GROUP_CHARS)

    def encode(self, lines: list[str]) -> list[list[int]]:
        """``encode_ordinary`` of each line, timed for the throughput."""
        started = time.perf_counter()
        ids = list(map(self.tokenizer.encode_ordinary, lines))
        self.seconds += time.perf_counter() - started
        self.totals.update(bytes=len("".join(lines).encode()), chars=sum(map(len, lines)),
                           tokens=sum(map(len, ids)))
        return ids

    def result(self, lines: int) -> dict:
        """The metrics, over a document of ``lines`` lines (the units of the lossless rate)."""
        self.totals["lines"] = lines
        totals, id_counts = self.final_counts()
        return metrics_of(self.tokenizer, totals, id_counts, self.seconds)

    def eval_totals(self, lines: int) -> EvalTotals:
        """The mergeable totals (``eval_totals.EvalTotals``) of the items added, over ``lines``
        lines."""
        self.totals["lines"] = lines
        totals, id_counts = self.final_counts()
        found = EvalTotals()
        found.counts.update({key: value for key, value in totals.items()
                             if not key.startswith(("distinct_", "joins", "one_token_bridges"))})
        found.ids.update(id_counts)
        found.words = {word: [count, bool(covered)]  # (each word once: add_word's merge
                       for word, count, covered in self.own_words()}  # is not needed)
        found.seconds = self.seconds
        return found

    def final_counts(self) -> tuple[Counter[str], Counter[int]]:
        raise NotImplementedError

    def own_words(self) -> Iterable[tuple[str, int, bool]]:
        """``(word, count, covered)`` of each distinct own word."""
        raise NotImplementedError


def line_text(line: str) -> str:
    """A line without its line end, the unit the lossless rate checks: ``line_text("a b\r\n")
    -> "a b"``."""
    return line[:-2] if line.endswith("\r\n") else line[:-1] if line.endswith("\n") else line


def _round_trips(decoded: str, line: str) -> bool:
    """Whether a line decodes back to itself without its line end. A word-local tokenizer
    gives a line the ids of its text and, at most, its line end's own (none for
    character-level BPE, whose whitespace is no token), so the line's ids are decoded once."""
    return decoded == line or decoded == line_text(line)


class RunTotals(Totals):
    """Word-local tokenizers: counts of runs, facts once per distinct run."""

    def __init__(self, tokenizer):
        super().__init__(tokenizer)
        self.id_counts: Counter[int] = Counter()
        self.run_counts: Counter[str] = Counter()
        self.covered: dict[str, bool] = {}  # distinct own words -> is one token
        self.by_words = _spans_are_tokens(tokenizer)  # add_runs and word_totals apply
        self.spelled: dict[str, str] = {}  # distinct run -> its tokens' spelling (add_runs)
        self.drops: dict[str, bool | None] = {}  # -> decode drops a last suffix (None: no tokens)
        self.word_ids: dict[str, tuple[int, ...]] = {}  # distinct word -> ids (add_runs)
        self.run_words: dict[str, list[str]] = {}  # distinct run -> its words (add_runs)
        self.odd_runs: set[str] = set()  # runs that do not spell themselves and a space
        self.merge_words = compiled_word_ids(tokenizer) if self.by_words else None

    def add(self, lines: list[str]) -> None:
        if self.by_words:
            return self.add_runs(lines)
        ids = self.encode(lines)
        self.id_counts.update(chain.from_iterable(ids))
        lossless = sum(map(_round_trips, map(self.tokenizer.decode, ids), lines))
        self.totals.update(lossless_lines=lossless)
        self.run_counts.update(chain.from_iterable(map(RUN_RE.findall, lines)))

    def add_runs(self, lines: list[str]) -> None:
        """``add`` with no encode of each line, for character-level BPE (``by_words``): a
        line's ids are its runs' ids (each run's words' ``_encode_word``, as
        ``encode_ordinary`` joins them; the new words of a group merged together,
        ``_learn_words``), so the ids are counted per distinct word (``final_counts``), and a
        line's decode is its runs' spellings joined, less the last suffix's space when its
        last token has one (``decode``'s rule; white space spells nothing), or, when each of
        its runs spells itself and a space, the runs joined by one space
        (``word_runs.plain_lossless``). Timed as the encoding."""
        started = time.perf_counter()
        text = "".join(lines)
        line_runs, split = word_runs.line_runs(lines, text)
        runs = list(chain.from_iterable(line_runs))
        self.run_counts.update(runs)
        fresh = set(runs).difference(self.spelled)
        self._learn_words(fresh)
        for run in fresh:
            self._spell(run)
        odd = self.odd_runs
        if split and odd.isdisjoint(runs):
            lossless = sum(map(word_runs.plain_lossless, lines))
        else:
            lossless = sum(map(_round_trips, map(self._decoded, line_runs), lines))
        self.seconds += time.perf_counter() - started
        self.totals.update(bytes=len(text.encode()), chars=len(text), lossless_lines=lossless)

    def _learn_words(self, runs: Iterable[str]) -> None:
        """The words of each new run (a run of ``\\S`` is one word when the words are
        split at white space), and the ids of the new words: merged in C together
        (``char_merges``), else by ``_encode_word``."""
        known, split, run_words = self.word_ids, self.tokenizer.split_words, self.run_words
        if self.tokenizer.pattern == "whitespace":
            run_words.update((run, [run]) for run in runs)
        else:
            run_words.update((run, split(run)) for run in runs)
        words = list({word: 0 for run in runs for word in run_words[run] if word not in known})
        if self.merge_words is not None:
            known.update(zip(words, self.merge_words(words)))
        else:
            known.update(zip(words, map(self.tokenizer._encode_word, words)))

    def _spell(self, run: str) -> None:
        tokenizer = self.tokenizer
        ids = [token_id for word in self.run_words[run] for token_id in self.word_ids[word]]
        spelled = self.spelled[run] = "".join(map(tokenizer._spelled.__getitem__, ids))
        drops = self.drops[run] = (tokenizer.symbols[ids[-1]].endswith(tokenizer.suffix)
                                   if ids else None)
        if not (drops and spelled == run + " "):
            self.odd_runs.add(run)

    def _decoded(self, runs: list[str]) -> str:
        """``decode`` of a line's ids, from its runs of other characters than white space
        (each has tokens: the last one's last token decides the drop)."""
        text = "".join(map(self.spelled.__getitem__, runs))
        return text[:-1] if runs and self.drops[runs[-1]] else text

    def whitespace_words(self) -> Counter[str] | None:
        """The text's ``str.split`` words with their counts, from its runs (``add_runs``),
        or None (the runs are not kept)."""
        return word_runs.split_words(self.run_counts) if self.by_words else None

    def final_counts(self) -> tuple[Counter[str], Counter[int]]:
        totals = Counter(self.totals)
        self.word_counts: Counter[str] = Counter()
        if self.by_words:
            totals.update(self.word_totals())
            ids_of = self.word_ids.__getitem__
            for word, count in self.word_counts.items():
                for token_id in ids_of(word):
                    self.id_counts[token_id] += count
            totals["tokens"] = self.id_counts.total()
        else:
            for run, count in self.run_counts.items():
                totals.update({key: count * value for key, value in self.run_facts(run).items()})
                for word in self.tokenizer.split_words(run):
                    self.word_counts[word] += count
        totals.update(distinct_own_words=len(self.covered),
                      distinct_covered_words=sum(self.covered.values()))
        return totals, self.id_counts

    def own_words(self) -> Iterable[tuple[str, int, bool]]:
        return ((word, count, self.covered[word]) for word, count in self.word_counts.items())

    def is_covered(self, word: str) -> bool:
        """Whether an own word encodes to one token, not a special one (remembered)."""
        if word not in self.covered:
            ids = self.tokenizer.encode_ordinary(word)
            self.covered[word] = len(ids) == 1 and ids[0] not in self.special_ids
        return self.covered[word]

    def word_totals(self) -> dict[str, int]:
        """``run_facts`` times the runs' counts, from each word's ids (``word_ids``), for a
        tokenizer whose tokens each span one or more characters of their word
        (``_spans_are_tokens``): a run of other characters is split when it has 2+ tokens;
        a word is covered when it is one token (``encode_ordinary(word)`` is its ids: the
        split of a word is the word). The plain rule, ``run_facts``, is its oracle
        (tests/bpe/test_totals.py)."""
        tokenizer, covered, word_counts = self.tokenizer, self.covered, self.word_counts
        ids_of, unk, special, split = (self.word_ids.__getitem__, tokenizer.unk_id,
                                       self.special_ids, self.run_words.__getitem__)
        words = split_words = own = covered_words = unknown = 0
        for run, count in self.run_counts.items():
            tokens = 0
            for word in split(run):  # 1+ words: white space runs are not counted
                ids = ids_of(word)
                tokens += len(ids)
                if word not in covered:
                    covered[word] = len(ids) == 1 and ids[0] not in special
                covered_words += count * covered[word]
                unknown += count * ids.count(unk)
                word_counts[word] += count
                own += count
            if tokens:
                words += count
                split_words += count * (tokens >= 2)
        return {"words": words, "split_words": split_words, "own_words": own,
                "covered_words": covered_words, "unknown_chars": unknown}

    def run_facts(self, run: str) -> dict[str, int]:
        """What a run of whitespace or of other characters adds to the totals."""
        tokenizer = self.tokenizer
        spans = [(start, end) for _id, start, end in tokenizer.token_spans(run, ())]
        own = tokenizer.split_words(run)
        facts = {"own_words": len(own), "covered_words": sum(map(self.is_covered, own))}
        if _IS_WORD.match(run):
            facts.update(words=1, split_words=split_flags([(0, len(run.encode()))], spans)[0])
        if self.byte_level:
            facts["multibyte_chars"], facts["cut_chars"] = count_cut_characters(
                run, {b for span in spans for b in span})
        else:
            facts["unknown_chars"] = tokenizer.unknown_count(run)
        return facts


def _spans_are_tokens(tokenizer) -> bool:
    """Whether each token of a word spans 1+ of its characters (``token_spans``), so that
    ``RunTotals.word_totals`` applies: character-level BPE that does not lowercase (a lowercased
    word may change length, and its spans are clamped to it)."""
    return tokenizer.algorithm == "char_bpe" and tokenizer.lowercase is False
