"""A Hugging Face ``transformers`` tokenizer folder: ``tokenizer.json`` (as ``hf_json`` writes it)
with ``tokenizer_config.json`` and ``special_tokens_map.json``, so that
``AutoTokenizer.from_pretrained(folder)`` loads a ``PreTrainedTokenizerFast`` whose
``encode(text, add_special_tokens=False)`` gives our ids.

The config adds nothing of its own: no prefix space, no clean-up of spaces when decoding, no
post-processor, every special token listed as special (``added_tokens_decoder``). Only
``<|endoftext|>``, when present, is named: as ``eos_token`` (GPT-2's convention); any other
special token is one of ``additional_special_tokens``. Reading the folder reads its
``tokenizer.json``.
"""

from __future__ import annotations

import json

from . import hf_json

CONFIG, SPECIAL_MAP = "tokenizer_config.json", "special_tokens_map.json"
ENDOFTEXT = "<|endoftext|>"
MAX_LENGTH = 1_000_000_000  # no truncation or length warning of its own


def dumps(tokenizer, name: str = "tokenizer") -> dict[str, bytes]:
    """``{"tokenizer.json": ..., "tokenizer_config.json": ..., "special_tokens_map.json": ...}``"""
    if tokenizer.algorithm != "byte_bpe":
        raise ValueError("the transformers format holds byte-level BPE tokenizers only")
    [document] = hf_json.dumps(tokenizer, "tokenizer").values()
    specials = dict(tokenizer.special_ids)
    named = {"eos_token": ENDOFTEXT} if ENDOFTEXT in specials else {}
    others = [token for token in specials if token != ENDOFTEXT]
    special_map = {**named, **({"additional_special_tokens": others} if others else {})}
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "model_max_length": MAX_LENGTH,
              "clean_up_tokenization_spaces": False, "add_prefix_space": False,
              "added_tokens_decoder": {str(token_id): {
                  "content": token, "lstrip": False, "rstrip": False, "normalized": False,
                  "single_word": False, "special": True} for token, token_id in specials.items()},
              **special_map}
    return {hf_json.FILE_NAME: document, CONFIG: _json(config), SPECIAL_MAP: _json(special_map)}


def loads(files: dict[str, bytes]):
    if hf_json.FILE_NAME not in files:
        raise ValueError(f"a transformers folder needs {hf_json.FILE_NAME}, found "
                         f"{', '.join(sorted(files))}")
    return hf_json.loads(files[hf_json.FILE_NAME], hf_json.FILE_NAME)


def _json(value) -> bytes:
    return (json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True) + "\n").encode()
