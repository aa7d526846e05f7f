"""Character-level BPE (``CharBPETokenizer``) in the native, ``hf`` and ``gpt2`` formats.

Tokens are written as their text (``"low"``, ``"er</w>"``, the UTF-8 the tokenizer holds decoded):
no byte-level spelling.

- native: ``algorithm: "char_bpe"`` with ``split``, ``lowercase``, ``unk_token`` and
  ``end_of_word_suffix`` instead of a pattern.
- ``tokenizer.json``: model BPE with ``end_of_word_suffix`` and ``unk_token``; pre-tokenizer
  ``WhitespaceSplit`` (split ``whitespace``) or ``Whitespace``, i.e. ``\\w+|[^\\w\\s]+``
  (split ``word_punct``); normalizer ``Lowercase`` when lowercasing; decoder ``BPEDecoder``.
- ``vocab.json`` + ``merges.txt`` in the subword-nmt / HF ``end_of_word_suffix`` convention. These
  files hold no split and no lowercasing: on import the split is ``whitespace``, no lowercasing;
  the special tokens are the entries that are neither one character (with or without the suffix)
  nor made by a merge, and must include ``<unk>``.
"""

from __future__ import annotations

from ..char_bpe import UNK, CharBPETokenizer
from ..checks import is_int
from .common import field, model_vocab

SUFFIX = "</w>"
_SPLITS = {"whitespace": {"type": "WhitespaceSplit"}, "word_punct": {"type": "Whitespace"}}


def _same(text: str) -> str:
    """How a token read from a file is spelled: as it is (the tokenizer takes text)."""
    return text


def _text(token: bytes) -> str:
    """How a token is written: ``_text(b"er</w>") -> "er</w>"``."""
    return token.decode()


def native_fields(tokenizer: CharBPETokenizer):
    """The native header fields and the spelling of tokens (their text)."""
    header = {"split": tokenizer.pattern, "lowercase": tokenizer.lowercase,
              "unk_token": tokenizer.unk_token, "end_of_word_suffix": tokenizer.suffix}
    return header, _text


def native_tokenizer(doc: dict, name: str, read_vocab, read_merges, read_specials):
    """A ``CharBPETokenizer`` from a native document (see ``native.loads``)."""
    vocab = read_vocab(doc, name, _same)
    merges, counts = read_merges(doc, name, _same)
    specials = read_specials(doc, name)
    tokenizer = CharBPETokenizer(
        vocab, merges, list(specials), field(doc, "unk_token", str, name),
        field(doc, "end_of_word_suffix", str, name), field(doc, "lowercase", bool, name),
        field(doc, "split", str, name), counts)
    if tokenizer.special_ids != specials:
        raise ValueError(f"{name}: special token ids {specials} do not match the vocab")
    return tokenizer


def hf_document(tokenizer: CharBPETokenizer, added_tokens: list[dict], model) -> dict:
    """The ``tokenizer.json`` document of a char-level tokenizer."""
    merges = [f"{a} {b}" for a, b in tokenizer.symbol_merges]
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added_tokens,
            "normalizer": {"type": "Lowercase"} if tokenizer.lowercase else None,
            "pre_tokenizer": _SPLITS[tokenizer.pattern], "post_processor": None,
            "decoder": {"type": "BPEDecoder", "suffix": tokenizer.suffix},
            "model": model(model_vocab(tokenizer, _text), merges, tokenizer.unk_token,
                           tokenizer.suffix)}


def hf_tokenizer(doc: dict, model: dict, specials: dict[str, int], name: str, read_merges):
    """A ``CharBPETokenizer`` from a ``tokenizer.json`` whose model has an end-of-word suffix."""
    unk = field(model, "unk_token", str, f"{name}: model")
    vocab = {}
    for token, token_id in field(model, "vocab", dict, f"{name}: model").items():
        if not is_int(token_id) or token_id < 0:
            raise ValueError(f"{name}: the id of {token!r:.40} must be a whole number >= 0, "
                             f"got {token_id!r:.40}")
        vocab[token_id] = token
    vocab.update({token_id: token for token, token_id in specials.items()})
    if unk not in specials:
        specials = {unk: _id_of(vocab, unk, name), **specials}
    return CharBPETokenizer(vocab, read_merges(model, name), list(specials), unk,
                            field(model, "end_of_word_suffix", str, f"{name}: model"),
                            _lowercase(doc, name),
                            _split(doc.get("pre_tokenizer"), name))


def _id_of(vocab: dict[int, str], token: str, name: str) -> int:
    ids = [token_id for token_id, text in vocab.items() if text == token]
    if not ids:
        raise ValueError(f"{name}: the unknown token {token!r} is not in the vocab")
    return min(ids)


def _lowercase(doc: dict, name: str) -> bool:
    normalizer = doc.get("normalizer")
    steps = normalizer.get("normalizers") if isinstance(normalizer, dict) and normalizer.get(
        "type") == "Sequence" else [normalizer] if normalizer else []
    if all(isinstance(s, dict) and s.get("type") == "Lowercase" for s in steps):
        return bool(steps)
    raise ValueError(f"{name}: normalizer {normalizer!r:.120} is not supported for char-level "
                     f"BPE (only Lowercase)")


def _split(pre_tokenizer, name: str) -> str:
    for split, step in _SPLITS.items():
        if isinstance(pre_tokenizer, dict) and pre_tokenizer.get("type") == step["type"]:
            return split
    raise ValueError(f"{name}: pre_tokenizer {pre_tokenizer!r:.120} is not supported for "
                     f"char-level BPE (only WhitespaceSplit or Whitespace)")


def gpt2_files(tokenizer: CharBPETokenizer):
    """``({token: id}, merges)`` for ``vocab.json`` and ``merges.txt``."""
    if tokenizer.suffix != SUFFIX:
        raise ValueError(f"vocab.json + merges.txt use the suffix {SUFFIX!r}, not "
                         f"{tokenizer.suffix!r}")
    vocab = {tokenizer.symbols[i]: i for i in sorted(tokenizer.symbols)}
    if len(vocab) != len(tokenizer.symbols):
        raise ValueError("cannot export to vocab.json: the vocab holds the same token twice")
    return vocab, tokenizer.symbol_merges


def gpt2_tokenizer(spellings: dict[str, int], merges: list[tuple[str, str]]):
    """A ``CharBPETokenizer`` from ``vocab.json`` and ``merges.txt`` (see the module docstring)."""
    made = {a + b for a, b in merges}
    vocab = {token_id: token for token, token_id in spellings.items()}
    specials = [vocab[i] for i in sorted(vocab)
                if len(vocab[i].removesuffix(SUFFIX)) != 1 and vocab[i] not in made]
    if UNK not in specials:
        raise ValueError(f"a char-level vocab.json needs the unknown token {UNK!r}")
    return CharBPETokenizer(vocab, merges, specials, UNK, SUFFIX)
