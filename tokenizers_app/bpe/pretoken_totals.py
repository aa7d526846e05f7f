"""Evaluation totals for byte-level BPE, counted once per distinct pre-token (see ``totals``).

The items added are pieces of the document (``evaluation.document_pieces``: cut only where no
pre-token crosses). A piece's tokens never cross its pre-tokens and spell their bytes (both
checked), so every line round-trips, and a pre-token's tokens, cut characters and split words are the same wherever it
occurs. Only whitespace-separated words that span pre-tokens (GPT-2 cuts ``"don't"`` as ``"don"
"'t"``) depend on neighbours: such a word is split. The places where two pre-tokens meet inside a
word (*joins*) are counted with big-integer bit operations over one byte per pre-token, its
``junction_code``.

Its plain twin: ``reference_evaluate`` in ``tests/bpe/reference.py`` (encode the whole text, count),
compared through ``evaluation.evaluate`` in ``tests/bpe/test_evaluation.py``.
"""

from __future__ import annotations

import operator
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable
from itertools import accumulate, chain, compress, count
from typing import NamedTuple

from .baselines import WORD_RE
from .metrics import word_spans
from .totals import Totals

_CONTINUATION, _LEAD_BYTES = bytes(range(0x80, 0xC0)), bytes(range(0xC0, 0x100))  # of UTF-8

# junction code bits: the pre-token starts (ends) inside a word; that word is one of its tokens;
# the whole pre-token is one word and one token
LEAD, TRAIL, LEAD_ONE_TOKEN, TRAIL_ONE_TOKEN, ONE_WORD_ONE_TOKEN = 1, 2, 4, 8, 16
_LINE_START = 0xFF ^ (LEAD | LEAD_ONE_TOKEN | ONE_WORD_ONE_TOKEN)  # nothing joins from the left
_CODE = operator.attrgetter("code")
_HAS = {bit: bytes(1 if code & bit else 0 for code in range(256))  # bytes.translate tables
        for bit in (LEAD, TRAIL, LEAD_ONE_TOKEN, TRAIL_ONE_TOKEN, ONE_WORD_ONE_TOKEN)}


def junction_code(words: list[tuple[int, int]], split: list[bool], size: int) -> int:
    """How a pre-token of ``size`` bytes, with these word spans and split flags, meets its
    neighbours: ``junction_code([(0, 3)], [False], 3) -> 31`` (one word, one token);
    ``junction_code([(1, 3)], [True], 3) -> TRAIL``."""
    lead = bool(words) and words[0][0] == 0
    trail = bool(words) and words[-1][1] == size
    code = lead * LEAD | trail * TRAIL
    code |= (lead and not split[0]) * LEAD_ONE_TOKEN | (trail and not split[-1]) * TRAIL_ONE_TOKEN
    return code | (len(words) == 1 and lead and trail and not split[0]) * ONE_WORD_ONE_TOKEN


def count_joins(codes: bytes) -> dict[str, int]:
    """Joins between consecutive pre-tokens, given their junction codes: all of them, those
    after (before) a pre-token whose word part there is one token, and one-word one-token
    pre-tokens joined on both sides. Each flag becomes a big integer, one byte per pre-token.

    ``count_joins(bytes([TRAIL, 31, LEAD]))`` -> 2 joins, one one-token bridge.
    """
    # byte i of the little-endian integer is pre-token i: ``<< 8`` moves a flag to the next one
    has = {bit: int.from_bytes(codes.translate(table), "little") for bit, table in _HAS.items()}
    lead, trail = has[LEAD], has[TRAIL]
    return {"joins": (trail << 8 & lead).bit_count(),
            "joins_ending_one_token": (has[TRAIL_ONE_TOKEN] << 8 & lead).bit_count(),
            "joins_starting_one_token": (trail << 8 & has[LEAD_ONE_TOKEN]).bit_count(),
            "one_token_bridges": (trail << 8 & has[ONE_WORD_ONE_TOKEN] & lead >> 8).bit_count()}


def pretoken_cuts(pretokens: list[str], ids: list[int], sizes: dict[int, int],
                  ascii_only: bool = False) -> list[int]:
    """Where the ids of each pre-token of a line start and end in the line's ids, found by byte
    offsets (``sizes``: token id -> byte length; ``ascii_only``: characters are bytes):
    ``pretoken_cuts(["ab", "c"], [7, 3], {7: 2, 3: 1}) -> [0, 1, 2]``. Raises ``ValueError`` if a
    token crosses a pre-token boundary."""
    token_at = dict(zip(accumulate(map(sizes.__getitem__, ids), initial=0), count()))
    lengths = map(len, pretokens) if ascii_only else map(len, map(str.encode, pretokens))
    try:
        return list(map(token_at.__getitem__, accumulate(lengths, initial=0)))
    except KeyError:
        raise ValueError(f"a token crosses a pre-token of {''.join(pretokens)!r}") from None


def count_cut_multibyte(data: bytes, ends: list[int]) -> tuple[int, int]:
    """``(multi-byte characters, those a token boundary cuts)`` in UTF-8 ``data`` cut into tokens
    ending at ``ends``: ``count_cut_multibyte("aé€".encode(), [1, 3, 5, 6]) -> (2, 1)``. A token
    ending on a continuation byte cuts a character; it is its first cut when that token holds
    more than continuation bytes (``metrics.count_cut_characters`` is the plain rule)."""
    if data.isascii():
        return 0, 0
    cut, start = 0, 0
    for end in ends[:-1]:
        if 0x80 <= data[end] < 0xC0 and data[start:end].translate(None, _CONTINUATION):
            cut += 1  # the first cut through this character
        start = end
    return len(data) - len(data.translate(None, _LEAD_BYTES)), cut


class PreTokenFacts(NamedTuple):
    """What one pre-token adds to the totals wherever it occurs."""

    ids: tuple[int, ...]
    words: int  # whitespace-separated words, or parts of words at its ends
    one_token_words: int  # of those, the ones within one of its tokens
    multibyte: int
    cut: int
    own_word: bool  # not whitespace only
    covered: bool  # an own word that encodes to one token (see PreTokenTotals._add_pretoken)
    code: int  # see junction_code


def pretoken_facts(pretoken: str, ids: tuple[int, ...], vocab: dict[int, bytes],
                   covered: bool = False) -> PreTokenFacts:
    """``pretoken_facts("é", (195, 169), {195: b"\\xc3", 169: b"\\xa9"})`` -> one word, split
    (``one_token_words=0``), one multi-byte character, cut (``multibyte=1, cut=1``).

    A word is split when a token ends inside it: when the first token end after its start comes
    before its end (``metrics.split_flags`` is the plain rule)."""
    data, tokens = pretoken.encode(), list(map(vocab.__getitem__, ids))
    if b"".join(tokens) != data:
        raise ValueError(f"the tokens {ids} do not spell the pre-token {pretoken!r}")
    ends = list(accumulate(map(len, tokens)))
    if len(data) == len(pretoken):  # ASCII: character offsets are byte offsets
        words, (multibyte, cut) = [m.span() for m in WORD_RE.finditer(pretoken)], (0, 0)
    else:
        words, (multibyte, cut) = word_spans(pretoken), count_cut_multibyte(data, ends)
    if len(ends) > 1:
        split = [ends[bisect_right(ends, start)] < end for start, end in words]
    else:
        split = [False] * len(words)
    return PreTokenFacts(ids, len(words), split.count(False), multibyte, cut,
                         not pretoken.isspace(), covered, junction_code(words, split, len(data)))


class PreTokenTotals(Totals):
    """Byte-level BPE: counts of pre-tokens, facts once per distinct pre-token."""

    def __init__(self, tokenizer):
        super().__init__(tokenizer)
        self.split = tokenizer.pretokenizer.split
        self.sizes = {token_id: len(token) for token_id, token in tokenizer.vocab.items()}
        self.facts: dict[str, PreTokenFacts] = {}
        self.pretoken_counts: Counter[str] = Counter()

    def add(self, lines: list[str]) -> None:
        ids = self.encode(lines)
        line_pretokens = list(map(self.split, lines))
        pretokens = list(chain.from_iterable(line_pretokens))
        self.pretoken_counts.update(pretokens)
        facts = list(map(self.facts.get, pretokens))
        if None in facts:
            self._learn(lines, line_pretokens, ids, facts)
            facts = list(map(self.facts.__getitem__, pretokens))
        junctions = bytearray(map(_CODE, facts))
        for start in accumulate(map(len, line_pretokens[:-1])):
            if start < len(junctions):  # the first pre-token of a line meets nothing before it
                junctions[start] &= _LINE_START
        self.totals.update(count_joins(junctions))

    def _learn(self, lines: list[str], line_pretokens: list[list[str]], line_ids: list[list[int]],
               facts: list) -> None:
        """Learn the facts of the pre-tokens seen for the first time (``facts`` is ``None``
        there). Their ids are the merges of their own bytes (``MergeTable.bpe_many``): the
        line's ids are its pre-tokens' ids joined (``final_counts`` checks that the tokens
        counted this way are the ones encoded), so nothing is cut from the line's ids."""
        table = getattr(self.tokenizer, "_table", None)
        if table is None:
            return self._learn_from_lines(lines, line_pretokens, line_ids, facts)
        pretokens = chain.from_iterable(line_pretokens)
        fresh = list(dict.fromkeys(compress(pretokens, map(operator.not_, facts))))
        for pretoken, ids in zip(fresh, table.bpe_many(map(str.encode, fresh))):
            self._add_pretoken(pretoken, tuple(ids))

    def _learn_from_lines(self, lines: list[str], line_pretokens: list[list[str]],
                          line_ids: list[list[int]], facts: list) -> None:
        """``_learn`` for a tokenizer without a merge table: each fresh pre-token's ids cut from
        its line's ids."""
        line_ends = list(accumulate(map(len, line_pretokens)))
        known = self.facts.__contains__
        index = facts.index(None)
        while True:
            line = bisect_right(line_ends, index)
            pretokens, ids = line_pretokens[line], line_ids[line]
            fresh = list(compress(count(), map(operator.not_, map(known, pretokens))))
            if fresh:  # (unless an earlier line held them too)
                cuts = (range(len(ids) + 1) if len(ids) == len(pretokens)  # one token each
                        else pretoken_cuts(pretokens, ids, self.sizes, lines[line].isascii()))
                for at in fresh:
                    if not known(pretokens[at]):  # (unless it is twice in this line)
                        self._add_pretoken(pretokens[at], tuple(ids[cuts[at]:cuts[at + 1]]))
            try:
                index = facts.index(None, line_ends[line])
            except ValueError:
                return

    def _add_pretoken(self, pretoken: str, ids: tuple[int, ...]) -> None:
        """Its facts; an own word is covered when ``encode_ordinary(pretoken)`` is one token, not a
        special one. That call gives ``ids`` if the pattern keeps the pretoken whole on its own,
        else 2+ pre-tokens and as many tokens."""
        covered = (len(ids) == 1 and ids[0] not in self.special_ids and not pretoken.isspace()
                   and self.split(pretoken) == [pretoken])
        self.facts[pretoken] = pretoken_facts(pretoken, ids, self.tokenizer.vocab, covered)

    def own_words(self) -> Iterable[tuple[str, int, bool]]:
        """Each distinct pre-token that is not whitespace, its count, whether it is covered."""
        facts = self.facts
        return ((pretoken, count, facts[pretoken].covered)
                for pretoken, count in self.pretoken_counts.items() if facts[pretoken].own_word)

    def final_counts(self) -> tuple[Counter[str], Counter[int]]:
        """Pre-token facts times their counts (``weighted_totals``); the tokens counted this
        way must be the tokens encoded."""
        pretokens, counts = list(self.pretoken_counts), list(self.pretoken_counts.values())
        facts = list(map(self.facts.__getitem__, pretokens))
        columns = {field: list(map(operator.attrgetter(field), facts)) for field in FACT_FIELDS}
        totals = weighted_totals(self.totals, counts, columns)
        id_counts = count_ids(map(_IDS, facts), counts)
        if id_counts.total() != totals["tokens"]:
            raise ValueError(f"the pre-tokens' tokens ({id_counts.total()}) are not the tokens "
                             f"encoded ({totals['tokens']}): a token crosses a pre-token")
        return totals, id_counts


FACT_FIELDS = ("words", "one_token_words", "multibyte", "cut", "own_word", "covered")
_IDS = operator.attrgetter("ids")


def weighted_totals(found: Counter[str], counts: list[int],
                    columns: dict[str, list[int]]) -> Counter[str]:
    """The totals of distinct pre-tokens seen ``counts`` times, with these facts (``columns``:
    each of ``FACT_FIELDS``, one value per pre-token), over ``found`` (the counts of the text
    and the joins, ``count_joins``). A join merges two word parts into one word, which is
    split: its parts no longer count as one-token words."""
    sums = {field: sum(map(operator.mul, counts, columns[field])) for field in FACT_FIELDS}
    totals = Counter(found)
    totals["lossless_lines"] = totals["lines"]  # the tokens spell each pre-token (checked)
    words = sums["words"] - totals["joins"]
    one_token = (sums["one_token_words"] - totals["joins_ending_one_token"]
                 - totals["joins_starting_one_token"] + totals["one_token_bridges"])
    totals.update(words=words, split_words=words - one_token, own_words=sums["own_word"],
                  covered_words=sums["covered"], multibyte_chars=sums["multibyte"],
                  cut_chars=sums["cut"], distinct_own_words=sum(columns["own_word"]),
                  distinct_covered_words=sum(columns["covered"]))
    return totals


def count_ids(ids: Iterable[tuple[int, ...]], counts: list[int]) -> Counter[int]:
    """Token count per id of distinct pre-tokens with these ids, seen ``counts`` times."""
    id_counts: Counter[int] = Counter()
    for token_ids, times in zip(ids, counts):
        for token_id in token_ids:
            id_counts[token_id] += times
    return id_counts
