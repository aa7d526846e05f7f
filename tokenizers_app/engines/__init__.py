"""Engines: every kind of tokenizer behind one protocol (``protocol.Engine``), with no Django.

Our core (``tokenizers_app.bpe``) holds byte-level and character-level BPE; ``hf.HFEngine`` and
``spm.SentencePieceEngine`` hold what the field's own libraries load. ``registry.KINDS`` holds one
object per kind, which the rest of the house asks whatever it asks a kind (``kind_named``,
``kind_of``): how it is stored, loaded, evaluated, downloaded and shown. ``load_engine(kind,
data)`` rebuilds an engine from its canonical file; ``read_engine_files(files)`` recognises one
in uploaded files (a ``tokenizer.json``, a ``transformers`` folder, a SentencePiece ``.model`` by
its content); ``evaluate`` computes the metrics of any kind.
"""

from .files import read_engine_files
from .kinds import FORMAT_TEXT, KindDescription, unknown_token
from .protocol import Engine
from .registry import (
    FILE,
    KINDS,
    ROWS,
    TokenizerKind,
    describe,
    engine_digest,
    engine_files,
    evaluate,
    kind_choices,
    kind_named,
    kind_of,
    load_engine,
    read_formats,
    register,
)

__all__ = ["FILE", "FORMAT_TEXT", "KINDS", "ROWS", "Engine", "KindDescription", "TokenizerKind",
           "describe", "engine_digest", "engine_files", "evaluate",
           "kind_choices", "kind_named", "kind_of", "load_engine",
           "read_engine_files", "read_formats", "register", "unknown_token"]
