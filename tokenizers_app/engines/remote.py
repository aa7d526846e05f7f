"""``SandboxedEngine``: an ``hf`` or ``sentencepiece`` tokenizer whose library runs in a child
process of a ``sandbox.EnginePool``, never in this one. This process keeps what the child
described (``untrusted.image``: the canonical file, vocab, kinds, special tokens) and asks the
child for each encoding and decoding; a panic, abort or overrun there is ``EngineFailed`` (422)
in words here, and the pool starts another child."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .library import LibraryEngine
from .sandbox import EnginePool, raise_refusal, unb64


def _special(value):
    return value if isinstance(value, str) else sorted(value)


class SandboxedEngine(LibraryEngine):
    merge_counts = None

    def __init__(self, image: dict, pool: Callable[[], EnginePool], digest: str,
                 wall_seconds: float | None = None, canonical: bytes | None = None):
        """``pool()``: the pool to ask (this process's current one); ``canonical``: the file
        the image was loaded from, when the image does not carry it
        (the child then gives its digest, which the caller checks)."""
        self.algorithm = image["kind"]
        self.canonical = canonical if canonical is not None else unb64(image["canonical"])
        self.loaded_digest = image.get("digest")
        self.pattern, self.model_type = image["pattern"], image["model_type"]
        self.vocab = {i: token.encode("utf-8", "surrogateescape")
                      for i, token in zip(image["ids"], image["tokens"])}
        self._kinds = {i: kind for i, kind in image["kinds"]}
        self._scores = image["scores"]
        self.merges = [(left.encode("utf-8", "surrogateescape"),
                        right.encode("utf-8", "surrogateescape"))
                       for left, right in image["merges"]]
        self.special_ids = {token: int(i) for token, i in image["special_ids"].items()}
        self.special_tokens = list(image["special_tokens"])
        self.unk_id = image["unk_id"]
        self.byte_ids = frozenset(image["byte_ids"])
        self.pool, self.digest, self.wall_seconds = pool, digest, wall_seconds
        self._sessions: dict[str, int] = {}  # batches whose words a child keeps, by session

    def vocab_kinds(self):
        """``(id, piece bytes, kind, score)`` by id, as the library's engine gives them."""
        scores = self._scores or [None] * len(self.vocab)
        for (token_id, token), score in zip(sorted(self.vocab.items()), scores):
            yield token_id, token, self._kinds.get(token_id, "normal"), score

    def _ask(self, op: str, **fields) -> dict:
        return raise_refusal(self.pool().call(op, self.algorithm, self.digest, self.canonical,
                                            self.wall_seconds, **fields))

    def _encoded(self, text: str, allowed_special, disallowed_special):
        spans = self._ask("spans", text=text, allowed=_special(allowed_special),
                          disallowed=_special(disallowed_special))["spans"]
        return [(i, s, e) for i, s, e in spans]

    def encode_ordinary(self, text: str) -> list[int]:
        return self.encode_ordinary_batch([text])[0]

    def encode_ordinary_batch(self, texts: list[str]) -> list[list[int]]:
        return self._ask("encode_ordinary_batch", texts=list(texts))["ids"]

    def documents_totals(self, texts: list[str], session: str | None = None):
        """An evaluation's batch of documents (their texts) counted in the child
        (``evaluation.documents_totals``): only the totals cross, never the tokens. Under a
        ``session``, the child keeps the batch's words until ``flush_totals`` asks for them
        (``kept_words``)."""
        from .batch_totals import gc_paused
        from .totals_wire import from_wire

        fields: dict = {"texts": texts}
        if session is not None:
            number = self._sessions.get(session, 0) + 1
            fields.update(session=session, number=number)
        with gc_paused():  # (the answer's words: no cycles among them)
            answer = self._ask("totals", **fields)["totals"]
            if session is not None:  # (words that crossed early: counted anew from here)
                self._sessions[session] = 0 if answer.get("flushed") else number
            return from_wire(answer)

    def flush_totals(self, session: str):
        """The words the child kept for ``session`` (totals of words alone)."""
        from .batch_totals import gc_paused
        from .totals_wire import from_wire

        number = self._sessions.pop(session, 0)
        with gc_paused():
            return from_wire(self._ask("flush", session=session, number=number)["totals"])

    def forget_session(self, session: str) -> None:
        """A session whose evaluation failed before its flush: its batches are no longer
        numbered here (the child drops its words once newer sessions start: ``kept_words``)."""
        self._sessions.pop(session, None)

    def decode(self, ids: Iterable[int]) -> str:
        return self.decode_batch([self._known(ids)])[0]

    def decode_batch(self, batch: list[list[int]]) -> list[str]:
        return self._ask("decode_batch", batch=[list(ids) for ids in batch])["texts"]

    def __repr__(self) -> str:
        return f"SandboxedEngine({self.algorithm} {self.model_type}, vocab_size={self.vocab_size})"
