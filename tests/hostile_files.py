"""Tokenizer files an attacker would import: each a ``tokenizer.json`` (or model) that makes its
library panic, abort, hang, allocate without bound, or that breaks a parser. Built here, small
(except the huge vocab), with no library: ``HOSTILE[name]() -> {file name: bytes}``."""

from __future__ import annotations

import json


def _doc(model: dict, **parts) -> dict:
    doc = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
           "normalizer": None, "pre_tokenizer": None, "post_processor": None, "decoder": None,
           "model": model}
    doc.update(parts)
    return doc


def wordpiece(vocab: dict | None = None, **parts) -> dict:
    vocab = vocab if vocab is not None else {"[UNK]": 0, "a": 1, "b": 2, "x": 3, "y": 4,
                                             "##a": 5, "##x": 6}
    return _doc({"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
                 "max_input_chars_per_word": 100, "vocab": vocab}, **parts)


def _json(doc) -> dict[str, bytes]:
    return {"tokenizer.json": json.dumps(doc).encode()}


def _split(regex: str) -> dict:
    return {"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated",
            "invert": False}


def _replace(pattern: dict, content: str) -> dict:
    return {"type": "Replace", "pattern": pattern, "content": content}


def catastrophic_split():
    return _json(wordpiece(pre_tokenizer=_split("(x+x+)+y")))


def catastrophic_split_in_sequence():
    return _json(wordpiece(pre_tokenizer={"type": "Sequence", "pretokenizers": [
        {"type": "Whitespace"}, _split("(a+a+)+b")]}))


def catastrophic_replace():
    return _json(wordpiece(normalizer=_replace({"Regex": "(x+x+)+y"}, "z")))


def multiplying_replace():
    """Three ``Replace`` of ``a`` by 101 ``a``s: 100 characters become 103 million."""
    return _json(wordpiece(normalizer={"type": "Sequence", "normalizers": [
        _replace({"String": "a"}, "a" * 101)] * 3}))


def multiplying_regex_replace():
    return _json(wordpiece(normalizer=_replace({"Regex": "."}, "xy" * 60)))


def huge_vocab_id():
    """A WordPiece with one id of 4,000,000,000 (a 45 KB file)."""
    vocab = {f"w{i}": i for i in range(3000)}
    vocab["[UNK]"], vocab["x"] = 3000, 4_000_000_000
    return _json(wordpiece(vocab))


def negative_vocab_id():
    return _json(wordpiece({"[UNK]": 0, "a": -5}))


def huge_added_token_id():
    doc = wordpiece()
    doc["added_tokens"] = [{"id": 2_000_000_000, "content": "[BIG]", "single_word": False,
                            "lstrip": False, "rstrip": False, "normalized": False,
                            "special": True}]
    return _json(doc)


def deep_nesting():
    """JSON nested 200,000 deep (a parser that recurses dies of it)."""
    return {"tokenizer.json": b'{"model": ' + b"[" * 200_000 + b"]" * 200_000 + b"}"}


def deep_nesting_unnamed():
    """The same, under another name (the importer looks at any JSON file)."""
    return {"vocab.json": b"[" * 100_000 + b"]" * 100_000}


def huge_vocab():
    """More vocab entries than ``MAX_VOCAB_SIZE`` (set low by the tests that use it)."""
    vocab = {f"t{i}": i for i in range(60_000)}
    vocab["[UNK]"] = 60_000
    return _json(wordpiece(vocab))


def huge_unigram_unk():
    return _json(_doc({"type": "Unigram", "unk_id": 3_000_000_000,
                       "vocab": [["<unk>", 0.0], ["a", -1.0]]}))


def not_a_tokenizer_library_error():
    return _json(wordpiece(pre_tokenizer={"type": "NoSuchPreTokenizer"}))


def garbage_sentencepiece():
    """Bytes that look like a protobuf to nobody: no reader takes them."""
    return {"tokenizer.model": b"\x0a\xff\xff\xff\xff\x0f" + b"\x00" * 64}


def nested_regex_lookahead():
    return _json(wordpiece(pre_tokenizer=_split("(?:(?:a|a)+)+b|[\\s\\S]")))


def invalid_utf8():
    return {"tokenizer.json": b'{"model": {"type": "WordPiece", "vocab": {"\xff\xfe": 0}}}'}


HOSTILE = {f.__name__: f for f in (
    catastrophic_split, catastrophic_split_in_sequence, catastrophic_replace,
    multiplying_replace, multiplying_regex_replace, huge_vocab_id, negative_vocab_id,
    huge_added_token_id, deep_nesting, deep_nesting_unnamed, huge_vocab, huge_unigram_unk,
    not_a_tokenizer_library_error, garbage_sentencepiece, nested_regex_lookahead,
    invalid_utf8)}

# what the refusal of each names (a part of its words)
CAUSES = {
    "catastrophic_split": "panics on a run of 3,000 'x'",
    "catastrophic_split_in_sequence": "panics on a run of 3,000 'a'",
    "catastrophic_replace": "panics on 3,000 'x'",
    "multiplying_replace": "normalizer turns",
    "multiplying_regex_replace": "normalizer turns",
    "huge_vocab_id": "token id 4,000,000,000, beyond the vocab's size",
    "negative_vocab_id": "token id -5, beyond the vocab's size",
    "huge_added_token_id": "token id 2,000,000,000, beyond the vocab's size",
    "deep_nesting": "nests its JSON more than",
    "deep_nesting_unnamed": "nests its JSON more than",
    "huge_vocab": "vocab entries; the registry keeps tokenizers of at most",
    "huge_unigram_unk": "unk_id 3,000,000,000",
    "not_a_tokenizer_library_error": "cannot load this tokenizer.json",
    "garbage_sentencepiece": "",
    "nested_regex_lookahead": "panics on a run of 3,000 'a'",
    "invalid_utf8": "",
}
