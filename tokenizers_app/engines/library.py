"""What the engines of another library's tokenizer (``hf``, ``sentencepiece``) share: the vocab's
lookups (``BytesVocab``, as the byte-level tokenizer has them), tiktoken's ``encode`` over the
engine's ``_encoded`` spans, and the encode endpoint's JSON. Each engine adds its library's
encoding (``_encoded``: ``(id, start byte, end byte)`` per token) and decoding."""

from __future__ import annotations

from collections.abc import Iterable

from ..bpe.token_table import BytesVocab


class LibraryEngine(BytesVocab):
    options: dict = {}  # what a character-level BPE keeps beside its pattern: nothing here

    def encode(self, text: str, allowed_special=frozenset(), disallowed_special="all") -> list[int]:
        """tiktoken's meaning: allowed special-token text becomes its id, disallowed special-token
        text raises ``ValueError``, any other is plain text."""
        return [i for i, _, _ in self._encoded(text, allowed_special, disallowed_special)]

    def token_spans(self, text: str, allowed_special="all") -> list[tuple[int, int, int]]:
        return self._encoded(text, allowed_special, ())

    def encoding_json(self, text: str, allowed_special=frozenset(),
                      disallowed_special="all") -> str:
        """The encode endpoint's answer: ``{"ids", "tokens", "spans"}`` of ``encode(text,
        ...)`` as JSON, each span the library's offsets in bytes."""
        found = self._encoded(text, allowed_special, disallowed_special)
        return self.token_table.encoding_json([i for i, _, _ in found],
                                              [(s, e) for _, s, e in found])

    def _known(self, ids: Iterable[int]) -> list[int]:
        """``ids`` as a list, or ``ValueError`` for the first id not in the vocab."""
        ids = list(ids)
        for token_id in ids:
            if token_id not in self.vocab:
                raise ValueError(f"token id {token_id!r} is not in the vocab")
        return ids

    def _encoded(self, text: str, allowed_special, disallowed_special):
        raise NotImplementedError
