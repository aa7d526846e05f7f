"""Small helpers shared by the format modules: reading JSON and checking its fields.

Every problem with a file becomes a ``ValueError`` that names the file and the bad field, never a
``KeyError`` or a ``json`` traceback.
"""

from __future__ import annotations

import json

from ..checks import is_int

_TYPE_NAMES = {str: "a string", int: "an integer", list: "a list", dict: "an object",
               bool: "true or false"}


def parse_json(data: bytes, name: str):
    """``parse_json(b'{"a": 1}', "x.json") -> {"a": 1}``; bad JSON is a ``ValueError``."""
    try:
        return json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"{name} is not UTF-8 text: {exc.reason} at byte {exc.start}") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"{name} is not valid JSON: {exc.msg} at line {exc.lineno} "
                         f"column {exc.colno}") from None
    except RecursionError:
        raise ValueError(f"{name} nests JSON too deeply to be a tokenizer file") from None


def field(data, key: str, kind: type, where: str, default=...):
    """``data[key]`` checked to be of type ``kind``; ``ValueError`` naming ``where`` otherwise.

    ``field({"a": 1}, "a", int, "x.json") -> 1``; a missing key returns ``default`` if given.
    """
    if not isinstance(data, dict):
        raise ValueError(f"{where} must be a JSON object, got {type(data).__name__}")
    if key not in data and default is not ...:
        return default
    if key not in data:
        raise ValueError(f"{where} has no {key!r} field")
    value = data[key]
    if not (is_int(value) if kind is int else isinstance(value, kind)):
        raise ValueError(f"{where}: {key!r} must be {_TYPE_NAMES.get(kind, kind.__name__)}, "
                         f"got {value!r:.80}")
    return value


def text_file(data: bytes, name: str) -> list[str]:
    """The lines of a UTF-8 text file, cut at ``\n`` only, without line ends:
    ``text_file(b"a b\r\nc d\n", "m.txt") -> ["a b", "c d"]``."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{name} is not UTF-8 text: {exc.reason} at byte {exc.start}") from None
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def to_int(text: str, where: str) -> int:
    """``to_int("42", "line 3") -> 42``; anything but a decimal integer is a ``ValueError``."""
    digits = text[1:] if text.startswith("-") else text
    if not (digits.isascii() and digits.isdigit()):
        raise ValueError(f"{where}: expected an integer, got {text!r:.80}")
    return int(text)


def model_vocab(tokenizer, spelling) -> dict[str, int]:
    """``{spelling: id}`` in id order; a special token is spelled as its text, which is how HF
    finds the id of an added token. Two tokens with one spelling are a ``ValueError``."""
    by_id = {token_id: token for token, token_id in tokenizer.special_ids.items()}
    vocab: dict[str, int] = {}
    for token_id in sorted(tokenizer.vocab):
        key = by_id[token_id] if token_id in by_id else spelling(tokenizer.vocab[token_id])
        if key in vocab:
            raise ValueError(f"cannot export to tokenizer.json: ids {vocab[key]} and {token_id} "
                             f"are both spelled {key!r}")
        vocab[key] = token_id
    return vocab
