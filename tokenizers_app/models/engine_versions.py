"""What a version of a kind another library encodes (``hf``, ``sentencepiece``) adds to
``TokenizerVersion``: writing its canonical file and rows, and loading its engine back."""

from __future__ import annotations

from tokenizers_app.engines import engine_digest, load_engine
from tokenizers_app.errors import Damaged

from .contents import EngineFile, MergeRule, VocabEntry
from .rows import bulk_insert


class EngineContents:
    """Methods of ``TokenizerVersion`` (a mixin: no fields) for the engines' kinds."""

    def write_engine_contents(self, engine) -> None:
        """Keep an engine's canonical file (once per digest) and write its vocab rows (every
        piece with its kind, and its score where the library has one) and, for BPE, its merge
        rows without counts (call inside the transaction that created this version)."""
        EngineFile.objects.get_or_create(digest=self.digest, defaults={
            "kind": engine.algorithm, "content": engine.canonical,
            "size_bytes": len(engine.canonical)})
        pk = self.pk
        bulk_insert(MergeRule, ["version_id", "rank", "left", "right", "count"],
                    ((pk, rank, left, right, None)
                     for rank, (left, right) in enumerate(engine.merges)))
        bulk_insert(VocabEntry, ["version_id", "token_id", "token", "kind", "score"],
                    ((pk, *row) for row in engine.vocab_kinds()))

    def load_engine(self):
        """The engine of an ``hf`` or ``sentencepiece`` version, from its canonical file; a file
        gone, or one that no longer gives the recorded digest, raises ``Damaged``."""
        stored = EngineFile.objects.filter(digest=self.digest).values_list("content",
                                                                           flat=True).first()
        try:
            engine = load_engine(self.algorithm, bytes(stored)) if stored is not None else None
        except ValueError as exc:
            raise Damaged(f"damaged version {self.label}: its {self.algorithm} file no longer "
                          f"loads ({exc}); it is not served. Run manage.py verify") from None
        if engine is None or engine_digest(engine) != self.digest:
            raise Damaged(f"damaged version {self.label}: its {self.algorithm} file is "
                          f"{'gone' if engine is None else 'changed'} (digest "
                          f"{self.digest[:12]}… recorded); it is not served. Run manage.py "
                          f"verify")
        return engine
