"""Tokenizer: encode / encode_ordinary / decode / token_spans / encode_iterable.

Within each pre-token the merge of lowest rank present is applied until none applies, which gives
the ids of GPT-2, tiktoken and Hugging Face ``tokenizers`` for the same vocab and merges.

Its plain twin: ``reference_encode`` in ``tests/bpe/reference.py`` (and the peers, tiktoken and
Hugging Face ``tokenizers``, on GPT-2's files).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import reduce
from operator import iadd

from .batch import encode_apart, encode_chunks
from .counting import default_workers
from .compiled import MergeTable
from .encoding_loop import missing_keys
from .pairs import pack
from .pretokenize import PreTokenizer, character_classes, iter_chunks
from .special_tokens import (
    allowed_special_tokens,
    check_allowed_special,
    check_special_tokens,
    special_regex,
    split_special,
)
from .token_table import BytesVocab

BATCH_MIN_CHARS = 1 << 20  # smaller batches are encoded in-process
CACHE_SIZE = 1 << 18  # pre-tokens kept with their ids; the cache is emptied when full


class Tokenizer(BytesVocab):
    """A byte-level BPE tokenizer.

    ``vocab: dict[int, bytes]`` holds every token, special tokens included (as their UTF-8
    bytes); ``merges: list[tuple[bytes, bytes]]`` in rank order; ``special_tokens`` is a list of
    strings whose ids are found in ``vocab``, or a ``dict[str, int]``.
    """

    algorithm = "byte_bpe"
    cache_size = CACHE_SIZE
    unk_id = None  # byte-level BPE spells every text: it has no unknown token
    options: dict = {}  # nothing beside the pattern (character-level BPE keeps its options)

    def __init__(self, vocab: dict[int, bytes], merges: list[tuple[bytes, bytes]],
                 special_tokens=(), pattern: str = "gpt2", merge_counts: list[int] | None = None):
        self.vocab = dict(vocab)
        self.merges = _as_byte_pairs(merges)
        self.merge_counts = list(merge_counts) if merge_counts is not None else None
        _check_numbers(self.vocab, self.merge_counts)
        self.pretokenizer = PreTokenizer(pattern)
        self.pattern = self.pretokenizer.pattern
        self.special_ids = self._special_ids(special_tokens)
        self.special_tokens = list(self.special_ids)
        self._table = self._merge_table()
        self._special_re = special_regex(self.special_tokens)
        self._cache: dict[str, tuple[int, ...]] = {}

    # -- construction -------------------------------------------------------------------------

    def _special_ids(self, special_tokens) -> dict[str, int]:
        if isinstance(special_tokens, dict):
            check_special_tokens(special_tokens)
            for token, token_id in special_tokens.items():
                if self.vocab.get(token_id) != token.encode():
                    raise ValueError(f"special token {token!r} is not id {token_id} in the vocab")
            return dict(special_tokens)
        tokens = check_special_tokens(special_tokens)
        wanted = {t.encode() for t in tokens}
        found: dict[bytes, int] = {}
        for token_id, token in self.vocab.items():
            if token in wanted and token_id < found.get(token, token_id + 1):
                found[token] = token_id  # the lowest id wins
        missing = [t for t in tokens if t.encode() not in found]
        if missing:
            raise ValueError(f"special token {missing[0]!r} is not in the vocab")
        return {t: found[t.encode()] for t in tokens}

    def _merge_table(self) -> MergeTable:
        """The merges as ids: ``pack(left id, right id) -> rank``, ``rank -> merged id``."""
        specials = set(self.special_ids.values())
        ids = _ids_by_bytes({i: t for i, t in self.vocab.items() if i not in specials})
        byte_ids = [ids.get(bytes([b])) for b in range(256)]
        if None in byte_ids:
            raise ValueError(f"the vocab has no token for byte 0x{byte_ids.index(None):02x}; "
                             f"byte-level BPE needs all 256 single bytes")
        lefts = list(map(ids.get, [left for left, _ in self.merges]))
        rights = list(map(ids.get, [right for _, right in self.merges]))
        merged = list(map(ids.get, [left + right for left, right in self.merges]))
        if None in lefts or None in rights or None in merged:
            self._raise_missing_part(ids)
        keys = list(map(pack, lefts, rights))
        ranks = dict(zip(reversed(keys), range(len(keys) - 1, -1, -1)))  # lowest rank wins
        return MergeTable(ranks, merged, byte_ids)

    def _raise_missing_part(self, ids: dict[bytes, int]):
        for rank, (left, right) in enumerate(self.merges):
            for part in (left, right, left + right):
                if part not in ids:
                    raise ValueError(f"merge {rank} ({left!r}, {right!r}): token {part!r} is "
                                     f"not in the vocab")

    # -- encoding -----------------------------------------------------------------------------

    def encode_ordinary(self, text: str) -> list[int]:
        """Encode text, treating special-token text as plain text."""
        return self._ids_of_text(text)

    def _ids_of_text(self, text: str) -> list[int]:
        """The ids of text between special tokens. With the gpt2 pattern and the compiled core,
        one pass in C scans, looks the pre-tokens up in the cache and merges the new ones
        (``MergeTable.encode_gpt2``); else the text is pre-tokenized and ``_ids_of`` runs."""
        one_pass = self._one_pass()
        if one_pass is not None:
            return one_pass(text, self._cache, self.cache_size, character_classes())
        return self._ids_of(self.pretokenizer.split(text))

    def _one_pass(self):
        """The compiled one-pass encoder, when it runs this tokenizer (gpt2 pattern), or None."""
        if self.pretokenizer._scan is None:
            return None
        return getattr(self._table, "encode_gpt2", None)

    def _ids_of(self, pretokens: list[str]) -> list[int]:
        """The ids of a list of pre-tokens. The fast path: they are looked up in the cache and
        their ids joined in C (``reduce`` adding each tuple to one list, which costs less than
        ``chain``'s iterator per tuple); on a miss, the distinct pre-tokens missing from the
        cache run BPE in Python, and the lookup is done again."""
        try:
            return reduce(iadd, map(self._cache.__getitem__, pretokens), [])
        except KeyError:
            self._learn(pretokens)
            return reduce(iadd, map(self._cache.__getitem__, pretokens), [])

    def _learn(self, pretokens: list[str]) -> None:
        """Run BPE on the pre-tokens missing from the cache and store their ids. A full cache
        is emptied first."""
        missing = list(missing_keys(self._cache, set(pretokens), self.cache_size))
        self._cache.update(zip(missing, self._table.bpe_many(map(str.encode, missing))))

    def encode(self, text: str, allowed_special=frozenset(), disallowed_special="all") -> list[int]:
        """Encode text; special tokens in ``allowed_special`` (a set, or ``"all"``) become their
        ids. Text of any special token that is disallowed (default: all not allowed) raises
        ``ValueError``, as tiktoken does."""
        allowed = self._allowed(allowed_special, disallowed_special, text)
        if not allowed:
            return self._ids_of_text(text)
        ids: list[int] = []
        for segment, is_special in split_special(text, special_regex(allowed)):
            if is_special:
                ids.append(self.special_ids[segment])
            else:
                ids += self._ids_of_text(segment)
        return ids

    def _pre_tokenize(self, text: str, allowed_special, disallowed_special) -> list:
        """The allowed special tokens' ids and the lists of pre-tokens between them, in order:
        ``[[" a", " b"], 50256, ["c"]]``."""
        allowed = self._allowed(allowed_special, disallowed_special, text)
        if not allowed:
            return [self.pretokenizer.split(text)]
        return [self.special_ids[segment] if is_special else self.pretokenizer.split(segment)
                for segment, is_special in split_special(text, special_regex(allowed))]

    def _lookup(self, parts: list) -> list[int]:
        """The ids of what ``_pre_tokenize`` gives."""
        if len(parts) == 1 and type(parts[0]) is list:
            return self._ids_of(parts[0])
        ids: list[int] = []
        for part in parts:
            if type(part) is int:
                ids.append(part)
            else:
                ids += self._ids_of(part)
        return ids

    def _allowed_list(self, allowed_special) -> list[str]:
        return allowed_special_tokens(self.special_tokens, allowed_special)

    def _allowed(self, allowed_special, disallowed_special, text: str) -> list[str]:
        return check_allowed_special(self.special_tokens, allowed_special, disallowed_special,
                                     text)

    def encoding_json(self, text: str, allowed_special=frozenset(),
                      disallowed_special="all") -> str:
        """The API encode's answer, ``{"ids", "tokens", "spans"}`` (``TokenTable.encoding_json``)."""
        return self.token_table.encoding_json(self.encode(text, allowed_special,
                                                          disallowed_special))

    def encode_iterable(self, texts: Iterable[str], allowed_special=frozenset(),
                        disallowed_special="all") -> Iterator[int]:
        """Encode a stream of text (for example the lines of a file) in constant memory.

        Yields exactly the ids of ``encode("".join(texts), ...)``: the stream is cut only where a
        cut cannot change pre-tokens.
        """
        allowed = self._allowed_list(allowed_special)
        chunks = iter_chunks(texts, allowed, self.pretokenizer.line_cuts, chunk_chars=1 << 16)
        for chunk in chunks:
            yield from self.encode(chunk, allowed_special, disallowed_special)

    def encode_batch(self, texts: list[str], allowed_special=frozenset(),
                     disallowed_special="all", workers: int | None = None) -> list[list[int]]:
        """``[self.encode(t, ...) for t in texts]``, computed in ``workers`` processes (default:
        all cores): this one and ``workers - 1`` forked ones (``batch.encode_chunks``), each new
        pre-token merged once; or, with the compiled one-pass encoder, each encoding its own
        share (``batch.encode_apart``). Long texts are cut at safe points (``iter_chunks``), so
        the ids are exact."""
        workers = workers or default_workers()
        if workers == 1 or sum(map(len, texts)) < BATCH_MIN_CHARS:
            return [self.encode(t, allowed_special, disallowed_special) for t in texts]
        self._allowed(allowed_special, disallowed_special, "")  # validate the arguments once
        allowed = self._allowed_list(allowed_special)
        jobs = [(index, chunk) for index, text in enumerate(texts)
                for chunk in iter_chunks([text], allowed, self.pretokenizer.line_cuts, 1 << 18)]
        encode = encode_apart if self._one_pass() is not None else encode_chunks
        chunk_ids = encode(self, [chunk for _, chunk in jobs], allowed_special,
                           disallowed_special, workers)
        out: list = [None] * len(texts)  # no empty lists made: they would set off collections
        for (index, _chunk), ids in zip(jobs, chunk_ids):
            if out[index] is None:
                out[index] = ids
            else:
                out[index] += ids
        return [ids if ids is not None else [] for ids in out]

    # -- decoding -----------------------------------------------------------------------------

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        return b"".join(self.token_bytes(i) for i in ids)

    def decode(self, ids: Iterable[int]) -> str:
        """Concatenate token bytes and decode UTF-8, replacing invalid sequences."""
        return self.decode_bytes(ids).decode("utf-8", errors="replace")

    def token_spans(self, text: str, allowed_special="all") -> list[tuple[int, int, int]]:
        """``(token id, start byte, end byte)`` of each token of ``text``, for display."""
        ids = self.encode(text, allowed_special, disallowed_special=())
        return [(token_id, start, end)
                for token_id, (start, end) in zip(ids, self.token_table.spans_of(ids))]

    def __repr__(self) -> str:
        return (f"Tokenizer(vocab_size={self.vocab_size}, merges={len(self.merges)}, "
                f"pattern={self.pattern!r}, special_tokens={self.special_tokens!r})")


MAX_TOKEN_ID = (1 << 31) - 1
MAX_COUNT = (1 << 63) - 1


def _check_numbers(vocab: dict[int, bytes], counts: list[int | None] | None) -> None:
    """Token ids are whole numbers in ``0..2**31-1`` and merge counts in ``0..2**63-1`` (what a
    database integer holds, and what the merge table's pair keys assume)."""
    ids = list(vocab)
    if any(type(i) is not int for i in ids):
        bad = next(i for i in ids if type(i) is not int)
        raise ValueError(f"token ids must be whole numbers, got {bad!r:.40}")
    if ids and (min(ids) < 0 or max(ids) > MAX_TOKEN_ID):
        bad = min(ids) if min(ids) < 0 else max(ids)
        raise ValueError(f"token id {bad} is out of range 0..{MAX_TOKEN_ID}")
    known = [c for c in counts or () if c is not None]
    if known and (min(known) < 0 or max(known) > MAX_COUNT):
        bad = min(known) if min(known) < 0 else max(known)
        raise ValueError(f"merge count {bad} is out of range 0..{MAX_COUNT}")


def _as_byte_pairs(merges) -> list[tuple[bytes, bytes]]:
    """The merges as a list of ``(bytes, bytes)`` tuples, copying only what is not one already
    (pairs given as lists, memoryview or bytearray)."""
    merges = list(merges)
    if all(type(p) is tuple and type(p[0]) is bytes and type(p[1]) is bytes for p in merges):
        return merges
    return [(bytes(a), bytes(b)) for a, b in merges]


def _ids_by_bytes(vocab: dict[int, bytes]) -> dict[bytes, int]:
    """``{token bytes: id}``; when the same bytes have several ids, the lowest id wins."""
    ordered = sorted(vocab, reverse=True)
    return dict(zip(map(vocab.__getitem__, ordered), ordered))
