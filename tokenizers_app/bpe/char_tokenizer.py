"""The character-level BPE tokenizer: words spelled as characters with an end-of-word suffix.

A word is its characters with the suffix glued to the last one: ``"low" -> ["l", "o", "w</w>"]``,
so ``"w"`` and ``"w</w>"`` are two symbols. Words come from a split (``whitespace`` or
``word_punct``), optionally lowercased; a symbol outside the vocab encodes to ``<unk>``.
Training lives in ``char_bpe``.
"""

from __future__ import annotations

from functools import cached_property

import regex

from .encoding_loop import merge_word, missing_keys
from .special_tokens import (
    allowed_special_tokens,
    check_allowed_special,
    check_special_tokens,
    special_regex,
    split_special,
)
from .token_table import TokenTable

UNK = "<unk>"
SPLITS = {"whitespace": r"\S+", "word_punct": r"\w+|[^\w\s]+"}  # \s is Unicode White_Space
CACHE_SIZE = 1 << 18  # words kept with their ids; the cache is emptied when full
_NO_RANK = 1 << 62


def split_regex(split: str) -> regex.Pattern:
    """The word regex of a split name: ``split_regex("word_punct").findall("hi, you") ->
    ["hi", ",", "you"]``."""
    if split not in SPLITS:
        raise ValueError(f"split must be 'whitespace' or 'word_punct', got {split!r}")
    return regex.compile(SPLITS[split])


def word_symbols(word: str, suffix: str = "</w>") -> list[str]:
    """``word_symbols("low") -> ["l", "o", "w</w>"]``"""
    return [*word[:-1], word[-1] + suffix]


def _symbol(token: str | bytes) -> str:
    """A symbol as text: ``_symbol(b"w</w>") -> "w</w>"``; text is kept as it is."""
    return token if isinstance(token, str) else bytes(token).decode()


class CharBPETokenizer:
    """A character-level BPE tokenizer with the engine protocol's types: ``vocab: dict[int,
    bytes]`` (each symbol's UTF-8, suffix included: ``b"w</w>"``), ``merges: list[tuple[bytes,
    bytes]]`` in rank order, ``special_tokens`` found in the vocab by text (``unk_token`` among
    them). Its symbols as text, where the character logic and the formats want them:
    ``symbols: dict[int, str]``, ``symbol_merges: list[tuple[str, str]]``. The vocab and merges
    may be given as either (``{0: "<unk>", 1: "a"}`` or ``{0: b"<unk>", 1: b"a"}``).

    ``t.encode_ordinary("lower")`` spells ``["low", "er</w>"]`` when those merges exist;
    ``t.decode(t.encode_ordinary("a  b"))  -> "a b"``.
    """

    algorithm = "char_bpe"

    def __init__(self, vocab: dict[int, str | bytes],
                 merges: list[tuple[str | bytes, str | bytes]],
                 special_tokens: list[str], unk_token: str = UNK,
                 end_of_word_suffix: str = "</w>", lowercase: bool = False,
                 split: str = "whitespace", merge_counts: list[int] | None = None):
        self.symbols = {i: _symbol(token) for i, token in vocab.items()}
        self.symbol_merges = [(_symbol(left), _symbol(right)) for left, right in merges]
        self.vocab = {i: text.encode() for i, text in self.symbols.items()}
        self.merges = [(left.encode(), right.encode()) for left, right in self.symbol_merges]
        self.merge_counts = list(merge_counts) if merge_counts is not None else None
        self.suffix, self.lowercase, self.unk_token = end_of_word_suffix, lowercase, unk_token
        self.word_re, self.pattern = split_regex(split), split
        self.special_tokens = check_special_tokens(special_tokens)
        by_text = {text: i for i, text in sorted(self.symbols.items(), reverse=True)}  # lowest id
        for token in [*self.special_tokens, unk_token]:
            if token not in by_text or token not in self.special_tokens:
                raise ValueError(f"{token!r} must be a special token and in the vocab")
        self.special_ids = {t: by_text[t] for t in self.special_tokens}
        self.unk_id = self.special_ids[unk_token]
        self._ids = {text: i for i, text in sorted(self.symbols.items(), reverse=True)
                     if i not in self.special_ids.values()}
        self._ranks, self._merged = self._rank_table()
        self._spelled = {i: t[:-len(self.suffix)] + " " if t.endswith(self.suffix) else t
                         for i, t in self.symbols.items()}  # what decode writes for each id
        self._cache: dict[str, tuple[int, ...]] = {}

    def _rank_table(self):
        """``(left id, right id) -> rank`` and ``rank -> merged id``."""
        ranks, merged = {}, []
        for rank, (left, right) in enumerate(self.symbol_merges):
            missing = [t for t in (left, right, left + right) if t not in self._ids]
            if missing:
                raise ValueError(f"merge {rank} ({left!r}, {right!r}): {missing[0]!r} is not "
                                 f"in the vocab")
            ranks.setdefault((self._ids[left], self._ids[right]), rank)
            merged.append(self._ids[left + right])
        return ranks, merged

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    @property
    def options(self) -> dict:
        """What a stored version keeps beside its pattern (the split) to rebuild this."""
        return {"lowercase": self.lowercase, "unk_token": self.unk_token,
                "end_of_word_suffix": self.suffix}

    @cached_property
    def token_table(self) -> TokenTable:
        """Each id's display text (``display.token_text`` of its UTF-8), as the byte-level
        ``Tokenizer.token_table`` gives it. Its byte lengths are not the spans of this
        tokenizer's tokens (whitespace belongs to none): those are ``token_spans``."""
        return TokenTable(self.vocab)

    def encoding_json(self, text: str, allowed_special=frozenset(),
                      disallowed_special="all") -> str:
        """``{"ids", "tokens", "spans"}`` of ``encode(text, ...)`` as JSON (what the API's encode
        answers, written by ``TokenTable.encoding_json``): the spans are ``token_spans``' byte
        offsets into the text."""
        ids = self.encode(text, allowed_special, disallowed_special)
        spans = self.token_spans(text, allowed_special_tokens(self.special_tokens,
                                                              allowed_special))
        if [token_id for token_id, _, _ in spans] != ids:  # one segmentation, two walks
            raise AssertionError("token_spans and encode disagree")
        return self.token_table.encoding_json(ids, [(start, end) for _, start, end in spans])

    def token_bytes(self, token_id: int) -> bytes:
        """The UTF-8 of the token's text, suffix included: ``b"w</w>"``."""
        if token_id not in self.vocab:
            raise ValueError(f"token id {token_id!r} is not in the vocab")
        return self.vocab[token_id]

    def split_words(self, text: str) -> list[str]:
        """``split_words("hi, you")`` -> ``["hi,", "you"]`` (whitespace) or ``["hi", ",",
        "you"]`` (word_punct); not lowercased."""
        return self.word_re.findall(text)

    def encode_ordinary(self, text: str) -> list[int]:
        """Encode text, treating special-token text as plain text."""
        ids: list[int] = []
        for word in self.word_re.findall(text):
            ids.extend(self._encode_word(word))
        return ids

    def encode(self, text: str, allowed_special=frozenset(), disallowed_special="all") -> list[int]:
        """As ``Tokenizer.encode``: allowed special tokens become their ids; text of a
        disallowed one (default: every one not allowed) raises ``ValueError``."""
        allowed = check_allowed_special(self.special_tokens, allowed_special,
                                        disallowed_special, text)
        ids: list[int] = []
        for segment, is_special in split_special(text, special_regex(allowed)):
            ids.extend([self.special_ids[segment]] if is_special else self.encode_ordinary(segment))
        return ids

    def _encode_word(self, word: str) -> tuple[int, ...]:
        ids = self._cache.get(word)
        if ids is None:
            ids = tuple(self.bpe(word.lower() if self.lowercase else word))
            missing_keys(self._cache, {word}, CACHE_SIZE)  # makes room
            self._cache[word] = ids
        return ids

    def bpe(self, word: str) -> list[int]:
        """Apply merges to one word, lowest rank first, until none applies."""
        ids = [self._ids.get(s, self.unk_id) for s in word_symbols(word, self.suffix)]
        while len(ids) > 1:
            pair = min(zip(ids, ids[1:]), key=lambda p: self._ranks.get(p, _NO_RANK))
            if pair not in self._ranks:
                break
            ids = merge_word(ids, pair, self._merged[self._ranks[pair]])
        return ids

    def unknown_count(self, text: str) -> int:
        """Characters of ``text`` mapped to ``<unk>`` (one ``<unk>`` per character)."""
        return self.encode_ordinary(text).count(self.unk_id)

    def decode(self, ids) -> str:
        """Token texts joined, each suffix turned into a space, the final one dropped:
        ``"lo" "w</w>" "er</w>" -> "low er"``."""
        ids = list(ids)
        try:
            text = "".join(map(self._spelled.__getitem__, ids))
        except KeyError as exc:
            raise ValueError(f"token id {exc.args[0]!r} is not in the vocab") from None
        return text[:-1] if ids and self.symbols[ids[-1]].endswith(self.suffix) else text

    def decode_bytes(self, ids) -> bytes:
        return self.decode(ids).encode()

    def token_spans(self, text: str, allowed_special="all") -> list[tuple[int, int, int]]:
        """``(token id, start byte, end byte)`` in ``text``: a token spans the characters it
        stands for (``<unk>`` one character); whitespace belongs to no token."""
        allowed = check_allowed_special(self.special_tokens, allowed_special, (), text)
        spans, offset = [], 0
        for segment, is_special in split_special(text, special_regex(allowed)):
            if is_special:
                spans.append((self.special_ids[segment], offset, offset + len(segment.encode())))
            else:
                spans.extend(self._segment_spans(segment, offset))
            offset += len(segment.encode())
        return spans

    def _segment_spans(self, segment: str, offset: int) -> list[tuple[int, int, int]]:
        spans, chars = [], 0  # offset is the byte offset of character ``chars`` of the segment
        for match in self.word_re.finditer(segment):
            offset += len(segment[chars:match.start()].encode())
            chars = match.start()
            spans.extend(self._word_spans(match.group(), offset))
        return spans

    def _word_spans(self, word: str, offset: int) -> list[tuple[int, int, int]]:
        """The spans of one word's tokens. Where lowercasing changed the word's length they
        are clamped to it, and the last one ends at the word's end. Only the last token's
        symbol ends the word: one before it that ends in the suffix's text (the word ``a</w>b``
        spelled it) stands for all its characters."""
        spans, chars = [], 0
        ids = self._encode_word(word)
        for k, token_id in enumerate(ids, 1):
            text = self.symbols[token_id]
            text = text.removesuffix(self.suffix) if k == len(ids) else text
            begin, chars = chars, chars + (1 if token_id == self.unk_id else len(text))
            spans.append((token_id, offset + len(word[:begin].encode()),
                          offset + len(word[:chars].encode())))
        spans[-1] = (spans[-1][0], spans[-1][1], offset + len(word.encode()))
        return spans

    def __repr__(self) -> str:
        return (f"CharBPETokenizer(vocab_size={self.vocab_size}, merges={len(self.merges)}, "
                f"split={self.pattern!r}, lowercase={self.lowercase})")
