"""Baseline tokenizers for comparison: characters, bytes, whitespace-separated words.

Each offers what ``evaluation.evaluate`` needs: ``algorithm``, ``vocab_size``, ``special_ids``,
``encode_ordinary``, ``decode``, ``token_bytes``, ``token_spans``, ``split_words`` and, for the
ones that can lose text, ``unknown_count``. Their own words (``split_words``) are the
whitespace-separated words.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from .char_bpe import split_regex
from .checks import is_int

WORD_RE = split_regex("whitespace")
UNICODE_SIZE = 0x110000


def whitespace_words(text: str) -> list[str]:
    """``whitespace_words(" a  b\\n") -> ["a", "b"]``, on Unicode White_Space."""
    return WORD_RE.findall(text)


class ByteTokenizer:
    """One token per UTF-8 byte, id = byte value: ``encode_ordinary("é") -> [195, 169]``."""

    algorithm = "byte"
    vocab_size = 256
    special_ids: dict[str, int] = {}
    special_tokens: list[str] = []
    split_words = staticmethod(whitespace_words)

    def encode_ordinary(self, text: str) -> list[int]:
        return list(text.encode())

    def decode(self, ids: Iterable[int]) -> str:
        return bytes(ids).decode("utf-8", errors="replace")

    def token_bytes(self, token_id: int) -> bytes:
        if not isinstance(token_id, int) or not 0 <= token_id < 256:
            raise ValueError(f"token id {token_id!r} is not a byte (0..255)")
        return bytes([token_id])

    def token_spans(self, text: str, allowed_special=()) -> list[tuple[int, int, int]]:
        """``token_spans("é") -> [(195, 0, 1), (169, 1, 2)]``"""
        return [(byte, i, i + 1) for i, byte in enumerate(text.encode())]


class CharTokenizer:
    """One token per character, id = code point: ``encode_ordinary("hé") -> [104, 233]``.

    The vocabulary is every code point (``vocab_size = 0x110000``): no text is unknown and the
    tokenizer needs no corpus, so vocabulary utilization is tiny by construction.
    """

    algorithm = "char"
    vocab_size = UNICODE_SIZE
    special_ids: dict[str, int] = {}
    special_tokens: list[str] = []
    split_words = staticmethod(whitespace_words)

    def encode_ordinary(self, text: str) -> list[int]:
        return [ord(char) for char in text]

    def decode(self, ids: Iterable[int]) -> str:
        return "".join(self.token_bytes(i).decode("utf-8", errors="replace") for i in ids)

    def token_bytes(self, token_id: int) -> bytes:
        if not isinstance(token_id, int) or not 0 <= token_id < UNICODE_SIZE:
            raise ValueError(f"token id {token_id!r} is not a code point")
        return chr(token_id).encode("utf-8", errors="surrogatepass")

    def token_spans(self, text: str, allowed_special=()) -> list[tuple[int, int, int]]:
        """``token_spans("hé") -> [(104, 0, 1), (233, 1, 3)]``"""
        spans, offset = [], 0
        for char in text:
            size = len(char.encode("utf-8", errors="surrogatepass"))
            spans.append((ord(char), offset, offset + size))
            offset += size
        return spans

    def unknown_count(self, text: str) -> int:
        return 0


class WordTokenizer:
    """One token per whitespace-separated word; a word outside the vocabulary is ``<unk>``.

    Ids: ``<unk>`` is 0 (a special token, as in character-level BPE), then the words in order.
    ``WordTokenizer(["the", "cat"]).encode_ordinary("the  dog") -> [1, 0]``; decoding joins
    the words with single spaces.
    """

    algorithm = "word"

    def __init__(self, words: Iterable[str], unk_token: str = "<unk>"):
        self.words = [unk_token, *words]
        self.ids: dict[str, int] = {}
        for word in self.words:
            if word in self.ids or whitespace_words(word) != [word]:
                raise ValueError(f"vocabulary word {word!r} is repeated, empty or holds "
                                 f"whitespace")
            self.ids[word] = len(self.ids)
        self.unk_token, self.special_tokens = unk_token, [unk_token]
        self.special_ids = {unk_token: 0}
        self.split_words = whitespace_words

    @classmethod
    def from_corpus(cls, lines: Iterable[str], max_size: int) -> WordTokenizer:
        """The ``max_size`` most frequent words of a stream of lines; equal counts are ordered
        by their UTF-8 bytes: ``from_corpus(["b a", "c b"], 2).words -> ["<unk>", "b", "a"]``.
        """
        if not is_int(max_size) or max_size < 1:
            raise ValueError(f"max_size must be an integer >= 1, got {max_size!r}")
        counts: Counter[str] = Counter()
        for line in lines:
            counts.update(whitespace_words(line))
        if not counts:
            raise ValueError("the corpus is empty: it holds no word")
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0].encode()))
        return cls(word for word, _count in ranked[:max_size] if word != "<unk>")

    @property
    def vocab_size(self) -> int:
        return len(self.words)

    def encode_ordinary(self, text: str) -> list[int]:
        return [self.ids.get(word, 0) for word in whitespace_words(text)]

    def decode(self, ids: Iterable[int]) -> str:
        return " ".join(self.token_bytes(i).decode() for i in ids)

    def token_bytes(self, token_id: int) -> bytes:
        if not isinstance(token_id, int) or not 0 <= token_id < len(self.words):
            raise ValueError(f"token id {token_id!r} is not in the vocab")
        return self.words[token_id].encode()

    def token_spans(self, text: str, allowed_special=()) -> list[tuple[int, int, int]]:
        """``token_spans("é cat")`` with ``cat`` known -> ``[(0, 0, 2), (2, 3, 6)]``"""
        spans, chars, offset = [], 0, 0
        for match in WORD_RE.finditer(text):
            offset += len(text[chars:match.start()].encode())
            chars, size = match.start(), len(match.group().encode())
            spans.append((self.ids.get(match.group(), 0), offset, offset + size))
        return spans

    def unknown_count(self, text: str) -> int:
        """Characters in words mapped to ``<unk>``: ``unknown_count("the dog") -> 3``."""
        return sum(len(word) for word in whitespace_words(text) if word not in self.ids)
