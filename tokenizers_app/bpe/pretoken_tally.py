"""Byte-level BPE's evaluation by one scan of the pre-tokens, with no encode of the text.

An evaluation needs, per distinct pre-token, how often it occurs and its facts
(``pretoken_totals.pretoken_facts``: its ids, words, cut characters, junction code), and the
joins between neighbours (``pretoken_totals.count_joins``). ``PreTokenTotals`` encodes every
occurrence and pre-tokenizes the text again to count them; a tally scans the pre-tokens once
and counts them, merging each distinct pre-token once. Its encoded tokens are not compared with
the counted ones (there are none): the guarantee is kept per distinct pre-token instead, its
tokens are checked to spell its bytes when it is learned, and the scan is the one
``encode_ordinary`` runs (the gpt2 pattern, ``gpt2_scan.pxi``).

- ``PreTokenTally`` (compiled, ``pretoken_tally.pxi``): the gpt2 pattern with the compiled
  core: the scan, lookups, merges and facts in C;
- ``PlainPreTokenTally``: its plain twin and oracle for any pattern (the pretokenizer's
  ``split``, ``MergeTable.bpe_many``, ``pretoken_facts``, ``count_joins``);
- ``TallyTotals``: the ``totals.Totals`` of an evaluation from a tally (``evaluation`` uses it
  when ``compiled_tally`` gives one, else ``PreTokenTotals``).
"""

from __future__ import annotations

import operator
import time
from collections import Counter
from collections.abc import Iterable
from itertools import compress

from . import compiled
from .pretoken_totals import (
    FACT_FIELDS,
    _LINE_START,
    PreTokenTotals,
    count_ids,
    count_joins,
    weighted_totals,
)
from .pretokenize import character_classes
from .totals import Totals

_JOINS = ("joins", "joins_ending_one_token", "joins_starting_one_token", "one_token_bridges")


def compiled_tally(tokenizer, count_words: bool = False):
    """The compiled tally of this tokenizer, or None when it does not apply: not byte-level
    BPE with the gpt2 pattern and the compiled core (a custom pattern, ``BPE_PURE_PYTHON=1``,
    no compiled modules, a tokenizer without a merge table). ``count_words``: it counts the
    text's whitespace-separated words too (``words()``), or None for a build older than that."""
    table = getattr(tokenizer, "_table", None)
    if (compiled.PreTokenTally is None or tokenizer.algorithm != "byte_bpe"
            or tokenizer.pretokenizer._scan is None or not isinstance(table, compiled.MergeTable)):
        return None
    if count_words and not hasattr(compiled.PreTokenTally, "words"):
        return None  # a build older than count_words
    return compiled.PreTokenTally(table, tokenizer.vocab, set(tokenizer.special_ids.values()),
                                  character_classes(), *([True] if count_words else []))


class PlainPreTokenTally:
    """``PreTokenTally``'s plain twin: the same attributes and results, for any pattern."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self.index: dict[str, int] = {}
        self.pretokens: list[str] = []
        self.ids: list[tuple[int, ...]] = []
        self._counts: list[int] = []
        self._facts: list = []
        self._joins: Counter[str] = Counter()
        self._learner = PreTokenTotals(tokenizer)  # its facts of a pre-token (_add_pretoken)

    def add(self, text: str) -> None:
        pretokens = self.tokenizer.pretokenizer.split(text)
        fresh = [p for p in dict.fromkeys(pretokens) if p not in self.index]
        for pretoken, ids in zip(fresh, self.tokenizer._table.bpe_many(map(str.encode, fresh))):
            self._learner._add_pretoken(pretoken, tuple(ids))
            self.index[pretoken] = len(self.pretokens)
            self.pretokens.append(pretoken)
            self.ids.append(tuple(ids))
            self._facts.append(self._learner.facts[pretoken])
            self._counts.append(0)
        numbers = list(map(self.index.__getitem__, pretokens))
        for number in numbers:
            self._counts[number] += 1
        codes = bytearray(self._facts[number].code for number in numbers)
        if codes:
            codes[0] &= _LINE_START
        self._joins.update(count_joins(codes))

    def counts(self) -> list[int]:
        return list(self._counts)

    def columns(self) -> dict[str, list[int]]:
        return {field: [int(getattr(fact, field)) for fact in self._facts]
                for field in FACT_FIELDS}

    def id_counts(self) -> dict[int, int]:
        return dict(count_ids(self.ids, self._counts))

    def joins(self) -> dict[str, int]:
        return {key: self._joins[key] for key in _JOINS}


class TallyTotals(Totals):
    """Byte-level BPE's totals from a tally (compiled, or ``PlainPreTokenTally``): the items
    added are pieces of the document (``evaluation.document_pieces``), each tallied on its own.
    The tally's time is the encoder's time (``seconds``): it is the tokenization."""

    def __init__(self, tokenizer, tally=None):
        super().__init__(tokenizer)
        self.tally = tally if tally is not None else PlainPreTokenTally(tokenizer)

    def add(self, pieces: list[str]) -> None:
        started = time.perf_counter()
        for piece in pieces:
            self.tally.add(piece)
        self.seconds += time.perf_counter() - started
        self.totals.update(bytes=sum(len(piece.encode()) for piece in pieces),
                           chars=sum(map(len, pieces)))

    def final_counts(self) -> tuple[Counter[str], Counter[int]]:
        tally = self.tally
        counts = tally.counts()
        self._columns = tally.columns()
        found = Counter(self.totals)
        found.update(tally.joins())
        found["tokens"] = sum(map(operator.mul, map(len, tally.ids), counts))
        return weighted_totals(found, counts, self._columns), Counter(tally.id_counts())

    def own_words(self) -> Iterable[tuple[str, int, bool]]:
        """Each distinct pre-token that is not whitespace, its count, whether it is covered."""
        tally, columns = self.tally, self._columns
        own = columns["own_word"]
        return zip(compress(tally.pretokens, own), compress(tally.counts(), own),
                   map(bool, compress(columns["covered"], own)))
