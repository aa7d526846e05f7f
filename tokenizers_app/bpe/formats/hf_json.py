"""Hugging Face ``tokenizer.json`` (model ``BPE``), byte-level.

Written so that ``tokenizers.Tokenizer.from_file(path).encode(text, add_special_tokens=False)``
gives our ``encode(text, allowed_special="all")`` ids:

- the model's ``vocab`` spells tokens in GPT-2's byte alphabet; ``merges`` are ``"left right"``
  strings (read back as strings or as ``[left, right]`` pairs);
- pattern ``gpt2``: pre-tokenizer ``ByteLevel(add_prefix_space=false, use_regex=true)``;
  ``gpt4`` or a custom regex: ``Sequence[Split(Regex, "Isolated"), ByteLevel(use_regex=false)]``;
  ``none``: ``ByteLevel(use_regex=false)`` alone;
- special tokens are ``added_tokens`` with ``"special": true``, and are in the model's vocab
  under their text (HF gives an added token missing there a new id);
- the decoder is ``ByteLevel``.

Reading maps the pre-tokenizer back to a pattern (the gpt2 and gpt4 regexes by name, any other
regex as custom) and every added token to a special token. What our tokenizer cannot reproduce
(a normalizer, ``add_prefix_space``, byte fallback, other pre-tokenizers) is a ``ValueError``.
Like Llama 3's files, ``ignore_merges: true`` is accepted.
"""

from __future__ import annotations

import json

from ..checks import is_int
from ..pretokenize import NAMED_PATTERNS, pattern_name
from ..tokenizer import Tokenizer
from .byte_level import spell, unspell
from .char_level import hf_document, hf_tokenizer
from .common import field, model_vocab, parse_json

FILE_NAME = "tokenizer.json"


def dumps(tokenizer, name: str = "tokenizer") -> dict[str, bytes]:
    """``{"<name>.json": tokenizer.json bytes}``; deterministic, indented like HF's own files."""
    if tokenizer.algorithm == "char_bpe":
        doc = hf_document(tokenizer, _added_tokens(tokenizer), _model)
    else:
        doc = _byte_level_document(tokenizer)
    return {f"{name}.json": (json.dumps(doc, ensure_ascii=False, indent=2) + "\n").encode()}


def _byte_level_document(tokenizer) -> dict:
    vocab = model_vocab(tokenizer, spell)
    merges = [f"{spell(a)} {spell(b)}" for a, b in tokenizer.merges]
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False}
    return {"version": "1.0", "truncation": None, "padding": None,
            "added_tokens": _added_tokens(tokenizer), "normalizer": None,
            "pre_tokenizer": _pre_tokenizer(tokenizer.pattern), "post_processor": None,
            "decoder": {**byte_level, "use_regex": True},
            "model": _model(vocab, merges, unk_token=None, end_of_word_suffix=None)}


def _added_tokens(tokenizer) -> list[dict]:
    return [{"id": token_id, "content": token, "single_word": False, "lstrip": False,
             "rstrip": False, "normalized": False, "special": True}
            for token, token_id in tokenizer.special_ids.items()]


def _pre_tokenizer(pattern: str) -> dict:
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False}
    if pattern == "gpt2":
        return {**byte_level, "use_regex": True}
    if pattern == "none":
        return {**byte_level, "use_regex": False}
    split = {"type": "Split", "pattern": {"Regex": NAMED_PATTERNS.get(pattern) or pattern},
             "behavior": "Isolated", "invert": False}
    return {"type": "Sequence", "pretokenizers": [split, {**byte_level, "use_regex": False}]}


def _model(vocab: dict[str, int], merges: list[str], unk_token, end_of_word_suffix) -> dict:
    return {"type": "BPE", "dropout": None, "unk_token": unk_token,
            "continuing_subword_prefix": None, "end_of_word_suffix": end_of_word_suffix,
            "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
            "vocab": vocab, "merges": merges}


# -- reading ----------------------------------------------------------------------------------

def is_hf(doc) -> bool:
    return isinstance(doc, dict) and isinstance(doc.get("model"), dict)


def loads(data: bytes, name: str = FILE_NAME):
    """A tokenizer from ``tokenizer.json`` bytes (byte-level or char-level BPE)."""
    doc = parse_json(data, name)
    if not is_hf(doc):
        raise ValueError(f"{name} is not a Hugging Face tokenizer.json (no \"model\" object)")
    model = field(doc, "model", dict, name)
    if model.get("type", "BPE") != "BPE":
        raise ValueError(f"{name}: model type {model.get('type')!r} is not supported, only BPE")
    specials = read_added_tokens(doc, name)
    if model.get("end_of_word_suffix"):
        return hf_tokenizer(doc, model, specials, name, read_merges)
    _check_byte_level_model(doc, model, name)
    vocab = _read_vocab(model, specials, name)
    merges = [(unspell(a), unspell(b)) for a, b in read_merges(model, name)]
    return Tokenizer(vocab, merges, specials, read_pattern(doc.get("pre_tokenizer"), name))


def read_added_tokens(doc: dict, name: str) -> dict[str, int]:
    """Every added token (special or not) as ``{content: id}``, in file order."""
    specials = {}
    for entry in field(doc, "added_tokens", list, name, default=[]):
        where = f"{name}: added token {entry!r:.60}"
        specials[field(entry, "content", str, where)] = field(entry, "id", int, where)
    return specials


def _check_byte_level_model(doc: dict, model: dict, name: str) -> None:
    unsupported = {"normalizer": doc.get("normalizer"), "byte_fallback": model.get("byte_fallback"),
                   "continuing_subword_prefix": model.get("continuing_subword_prefix"),
                   "dropout": model.get("dropout")}
    for key, value in unsupported.items():
        if value:
            raise ValueError(f"{name}: {key} {value!r:.80} is not supported by byte-level BPE")


def _read_vocab(model: dict, specials: dict[str, int], name: str) -> dict[int, bytes]:
    """``{spelling: id}`` from the model plus the added tokens as ``{id: bytes}``."""
    by_id = {token_id: token for token, token_id in specials.items()}
    vocab = {token_id: token.encode() for token, token_id in specials.items()}
    for spelling, token_id in field(model, "vocab", dict, f"{name}: model").items():
        if not is_int(token_id) or token_id < 0:
            raise ValueError(f"{name}: vocab id of {spelling!r} must be an integer >= 0")
        if token_id in vocab and token_id not in by_id:
            raise ValueError(f"{name}: token id {token_id} is used twice in the vocab")
        if token_id not in by_id:  # an added token's content defines its id
            vocab[token_id] = unspell(spelling)
    return vocab


def read_merges(model: dict, name: str) -> list[tuple[str, str]]:
    """Merges as ``"left right"`` strings or ``[left, right]`` pairs -> ``[(left, right)]``."""
    merges = []
    for entry in field(model, "merges", list, f"{name}: model", default=[]):
        pair = entry.split(" ") if isinstance(entry, str) else entry
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) and p
                                                                  for p in pair)):
            raise ValueError(f"{name}: a merge must be \"left right\" or [left, right], "
                             f"got {entry!r:.80}")
        merges.append((pair[0], pair[1]))
    return merges


def read_pattern(pre_tokenizer, name: str) -> str:
    """Our pattern for an HF byte-level pre-tokenizer (see the module docstring)."""
    steps = [pre_tokenizer] if isinstance(pre_tokenizer, dict) else None
    if isinstance(pre_tokenizer, dict) and pre_tokenizer.get("type") == "Sequence":
        steps = pre_tokenizer.get("pretokenizers")
    if not isinstance(steps, list) or not steps or not _is_byte_level(steps[-1]):
        raise ValueError(f"{name}: pre_tokenizer {pre_tokenizer!r:.120} is not supported; "
                         f"byte-level BPE needs a ByteLevel pre-tokenizer last")
    if steps[-1].get("add_prefix_space", False):
        raise ValueError(f"{name}: ByteLevel add_prefix_space=true is not supported (our "
                         f"tokenizer never adds a space before the text)")
    regex_step = steps[-1].get("use_regex", True)
    if len(steps) == 1:
        return "gpt2" if regex_step else "none"
    if len(steps) == 2 and not regex_step:
        return _split_pattern(steps[0], name)
    raise ValueError(f"{name}: pre_tokenizer {pre_tokenizer!r:.120} is not supported")


def _is_byte_level(step) -> bool:
    return isinstance(step, dict) and step.get("type") == "ByteLevel"


def _split_pattern(step, name: str) -> str:
    if not (isinstance(step, dict) and step.get("type") == "Split"
            and step.get("behavior") == "Isolated" and not step.get("invert", False)
            and isinstance(step.get("pattern"), dict)
            and isinstance(step["pattern"].get("Regex"), str)):
        raise ValueError(f"{name}: pre-tokenizer step {step!r:.120} is not supported; expected "
                         f"Split with a Regex pattern and behavior Isolated")
    return pattern_name(step["pattern"]["Regex"])
