"""The one interface the app knows of a tokenizer, whatever its kind.

Our core's tokenizers (``bpe.Tokenizer``: byte-level BPE; ``bpe.CharBPETokenizer``: character-
level BPE) satisfy it as they are; ``hf.HFEngine`` and ``spm.SentencePieceEngine`` wrap the
field's own libraries to satisfy it. Evaluation, the playground, compare, the encode endpoint and
downloads call only these; a page asks ``algorithm`` (the kind) only to label it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, runtime_checkable

Span = tuple[int, int, int]  # (token id, start byte, end byte) in the text's UTF-8


@runtime_checkable
class Engine(Protocol):
    """What every tokenizer of a version offers.

    - ``algorithm``: the kind, a name in ``registry.KINDS`` (what it is asked: its object);
    - ``vocab``: ``{id: token bytes}`` (for ``hf`` and ``sentencepiece``: the piece as the
      library names it, ``"▁the"``, ``"##ing"``, ``"<0xE6>"``, in UTF-8);
    - ``special_ids``: ``{special token text: id}``; ``special_tokens``: their texts in order;
    - ``merges``: ``[(left bytes, right bytes)]`` in rank order (empty for kinds without);
    - ``unk_id``: the unknown token's id, or None; ``options``: what a kind keeps beside its
      pattern (character-level BPE's lowercasing and suffix; empty for the others);
    - ``encode_ordinary(text)``: the text's ids alone, special-token text as plain text, no
      template tokens (``[CLS]``, ``<s>``);
    - ``encode(text, allowed_special, disallowed_special)``: tiktoken's meaning;
    - ``decode(ids)``; ``token_spans(text, allowed_special)``: each token's byte span, for
      colouring.
    """

    algorithm: str
    pattern: str
    vocab: dict[int, bytes]
    special_ids: dict[str, int]
    special_tokens: list[str]
    merges: list[tuple[bytes, bytes]]
    unk_id: int | None
    options: dict

    @property
    def vocab_size(self) -> int: ...

    def encode_ordinary(self, text: str) -> list[int]: ...

    def encode(self, text: str, allowed_special=frozenset(),
               disallowed_special="all") -> list[int]: ...

    def decode(self, ids: Iterable[int]) -> str: ...

    def token_bytes(self, token_id: int) -> bytes: ...

    def token_spans(self, text: str, allowed_special="all") -> list[Span]: ...

    def encoding_json(self, text: str, allowed_special=frozenset(),
                      disallowed_special="all") -> str: ...
