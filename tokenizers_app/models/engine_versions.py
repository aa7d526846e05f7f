"""What a version of a kind another library encodes (``hf``, ``sentencepiece``) adds to
``TokenizerVersion``: writing its canonical file and rows, and loading its engine back."""

from __future__ import annotations

from django.conf import settings

from tokenizers_app.engines import FILE, engine_digest
from tokenizers_app.engines.remote import SandboxedEngine
from tokenizers_app.engines.sandbox import (
    EngineFailed,
    Limits,
    b64,
    pool,
    raise_refusal,
    run_once,
)
from tokenizers_app.engines.untrusted import check_json_depth
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

    def canonical_content(self) -> bytes:
        """Its canonical file's bytes when its kind keeps one (b"" otherwise, or when gone):
        what a kind reads its fields from (model type, normalizer), no engine loaded."""
        content = b""
        if self.kind.stored_in == FILE:
            content = EngineFile.objects.filter(digest=self.digest).values_list(
                "content", flat=True).first() or b""
        return bytes(content)

    def kind_notes(self) -> list[str]:
        """What this version's metrics mean for its kind (``TokenizerKind.notes``), read from
        its canonical file's fields when its kind keeps one (no engine is loaded for it)."""
        return self.kind.notes(self.canonical_content())

    def load_engine(self, *, web: bool = False):
        """The engine of an ``hf`` or ``sentencepiece`` version, from its canonical file, loaded
        in a child of this process's pool (``web``: the web pool, answering within
        ``ENGINE_WEB_SECONDS``; else the worker's); a file gone, one that no longer loads or
        no longer gives the recorded digest raises ``Damaged``; one the child cannot load
        within its limits, ``EngineFailed`` in words."""
        stored = EngineFile.objects.filter(digest=self.digest).values_list("content",
                                                                           flat=True).first()
        if stored is None:
            raise Damaged(f"damaged version {self.label}: its {self.algorithm} file is gone "
                          f"(digest {self.digest[:12]}… recorded); it is not served. Run "
                          f"manage.py verify")
        chosen = web_pool if web else worker_pool
        try:
            answer = chosen().call("load", self.algorithm, self.digest, bytes(stored))
            image = raise_refusal(answer)["image"]
        except EngineFailed as exc:
            raise EngineFailed(f"version {self.label} cannot be loaded here: {exc}") from None
        except ValueError as exc:
            raise Damaged(f"damaged version {self.label}: its {self.algorithm} file no longer "
                          f"loads ({exc}); it is not served. Run manage.py verify") from None
        engine = SandboxedEngine(image, chosen, self.digest,
                                 settings.ENGINE_WEB_SECONDS if web else None, bytes(stored))
        if not image.get("digest") == engine_digest(engine) == self.digest:
            raise Damaged(f"damaged version {self.label}: its {self.algorithm} file is changed "
                          f"(digest {self.digest[:12]}… recorded); it is not served. Run "
                          f"manage.py verify")
        return engine


def web_pool():
    """This web process's children that run other libraries' tokenizers."""
    return pool("web", settings.ENGINE_POOL_SIZE,
                Limits(settings.ENGINE_MEMORY_BYTES, settings.ENGINE_CPU_SECONDS,
                       settings.ENGINE_LOAD_SECONDS), settings.ENGINE_WEB_SECONDS)


def worker_pool():
    """A worker's child for evaluating other libraries' tokenizers."""
    return pool("worker", 1, Limits(settings.ENGINE_WORKER_MEMORY_BYTES,
                                    settings.ENGINE_WORKER_SECONDS * 2,
                                    settings.ENGINE_WORKER_SECONDS),
                settings.ENGINE_WORKER_SECONDS)


def check_json_files(files: dict[str, bytes]) -> None:
    """``Invalid`` for a JSON file nested deeper than ``IMPORT_MAX_JSON_DEPTH`` (before any
    parser of this process reads it)."""
    for name, data in files.items():
        check_json_depth(name, data, settings.IMPORT_MAX_JSON_DEPTH)


def read_engine_files_checked(files: dict[str, bytes], format: str | None):
    """``engines.read_engine_files`` in a disposable child under the import limits, with the
    checks of ``engines.untrusted`` (nesting, vocab size, ids, adversarial inputs, growth): the
    engine as a ``SandboxedEngine`` (its library never ran in this process), None when no file
    is for an engine; ``ValueError`` when the library cannot read them; ``Invalid`` or
    ``EngineFailed`` naming what the check refused."""
    seconds = settings.IMPORT_CHECK_SECONDS
    message = {"op": "read", "files": {name: b64(data) for name, data in files.items()},
               "format": format,
               "checks": {"max_depth": settings.IMPORT_MAX_JSON_DEPTH,
                          "max_vocab": settings.MAX_VOCAB_SIZE,
                          "growth": settings.IMPORT_MAX_GROWTH,
                          "input_seconds": settings.IMPORT_INPUT_SECONDS}}
    try:
        answer = raise_refusal(run_once(message, Limits(settings.IMPORT_CHECK_MEMORY_BYTES,
                                                        seconds, seconds * 1.5 + 5)))
    except EngineFailed as exc:
        raise EngineFailed(f"the tokenizer file was refused: {exc}", field="files") from None
    if answer.get("none"):
        return None
    image = answer["image"]
    engine = SandboxedEngine(image, web_pool, "", settings.ENGINE_WEB_SECONDS)
    engine.digest = engine_digest(engine)
    return engine
