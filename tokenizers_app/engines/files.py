"""Engine files: recognise a tokenizer the field's libraries load among uploaded files, and the
``transformers`` config written beside a ``tokenizer.json`` (the kinds themselves, their
loading and digests: ``registry``)."""

from __future__ import annotations

import json

from .hf import HFEngine
from .spm import SentencePieceEngine, is_sentencepiece

HF_FILE = "tokenizer.json"


def read_engine_files(files: dict[str, bytes], format: str | None = None):
    """The engine of uploaded files, or None when none of them is for an engine: a SentencePiece
    model (any name; recognised by its content), else a ``tokenizer.json`` (a ``transformers``
    folder holds one) or the one JSON file given with a ``"model"``. ``format`` narrows the
    search (``sentencepiece``; ``hf`` and ``transformers`` both read the ``tokenizer.json``).
    A file that is meant for an engine but that its library cannot read raises ``ValueError``."""
    if format in (None, "sentencepiece"):
        models = [name for name, data in sorted(files.items()) if is_sentencepiece(data)]
        if models and (format == "sentencepiece" or HF_FILE not in files):
            return SentencePieceEngine(files[models[0]])
        if format == "sentencepiece":
            raise ValueError(f"none of {', '.join(sorted(files))} is a SentencePiece model")
    name = _hf_file(files)
    return HFEngine(files[name]) if name is not None else None


def _hf_file(files: dict[str, bytes]) -> str | None:
    if HF_FILE in files:
        return HF_FILE
    jsons = [name for name, data in files.items() if data.lstrip()[:1] == b"{"]
    if len(jsons) != 1:
        return None
    try:
        doc = json.loads(files[jsons[0]])
    except ValueError:
        return None
    return jsons[0] if isinstance(doc, dict) and isinstance(doc.get("model"), dict) else None


MAX_LENGTH = 1_000_000_000  # the transformers config's model_max_length: no truncation


def transformers_config(engine) -> dict[str, bytes]:
    """``tokenizer_config.json`` and ``special_tokens_map.json`` for ``AutoTokenizer``: a
    ``PreTrainedTokenizerFast`` over the ``tokenizer.json``, every special token listed, the
    unknown token named, no clean-up of spaces when decoding."""
    unk = engine.vocab[engine.unk_id].decode() if engine.unk_id is not None else None
    special_map = {**({"unk_token": unk} if unk else {}),
                   **({"additional_special_tokens": [t for t in engine.special_tokens
                                                     if t != unk]}
                      if [t for t in engine.special_tokens if t != unk] else {})}
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": MAX_LENGTH,
              "clean_up_tokenization_spaces": False,
              "added_tokens_decoder": {str(i): {"content": t, "lstrip": False, "rstrip": False,
                                                "normalized": False, "single_word": False,
                                                "special": True}
                                       for t, i in engine.special_ids.items()},
              **special_map}
    return {"tokenizer_config.json": _json(config), "special_tokens_map.json": _json(special_map)}


def _json(value) -> bytes:
    return (json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True) + "\n").encode()
