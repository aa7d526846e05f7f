"""Engines: every kind of tokenizer behind one protocol (``protocol.Engine``), with no Django.

Our core (``tokenizers_app.bpe``) holds byte-level and character-level BPE; ``hf.HFEngine`` and
``spm.SentencePieceEngine`` hold what the field's own libraries load. ``load_engine(kind, data)``
rebuilds an engine from its canonical file; ``read_engine_files(files)`` recognises one in
uploaded files (a ``tokenizer.json``, a ``transformers`` folder, a SentencePiece ``.model`` by
its content); ``evaluate`` computes the metrics of any kind.
"""

from .evaluation import evaluate
from .files import (
    DOWNLOAD_FORMATS,
    ENGINE_KINDS,
    engine_digest,
    engine_files,
    load_engine,
    read_engine_files,
)
from .kinds import FORMAT_TEXT, describe, unknown_token
from .notes import kind_notes
from .protocol import Engine

__all__ = ["DOWNLOAD_FORMATS", "FORMAT_TEXT", "describe", "unknown_token", "ENGINE_KINDS", "Engine", "engine_digest", "engine_files",
           "evaluate", "kind_notes", "load_engine", "read_engine_files"]
