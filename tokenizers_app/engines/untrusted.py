"""Checks of tokenizer files made elsewhere before they are kept: what is refused before the
library sees a file (JSON nested too deep, a vocab over the registry's size, an id beyond the
vocab), and what the library, loaded in a disposable child (``sandbox``), is then tried on: long
runs of each character class, mixed text, every byte, as the pattern check tries a pattern. A
normalizer that grows text more than ``growth`` times, or an input that takes over
``input_seconds`` to encode, is refused naming it; a panic or crash is refused by the sandbox.

``image(engine)`` describes a loaded engine as data (its canonical file, vocab with kinds and
scores, merges, special tokens), which the parent process turns into a ``SandboxedEngine``
without running the library itself."""

from __future__ import annotations

import json
import re
import time

from ..bpe.pattern_check import RUN_CHARS, adversarial_inputs, literal_characters
from ..errors import Invalid, Unencodable

MAX_DEPTH = 64  # a tokenizer.json nests about 6 deep
_STRINGS = re.compile(rb'"(?:[^"\\]++|\\.)*+"', re.S)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def check_json_depth(name: str, data: bytes, most: int = MAX_DEPTH) -> None:
    """``Invalid`` naming the file when a JSON text nests arrays and objects deeper than
    ``most`` (checked on the bytes, without recursion, before any parser reads them); text that
    is not JSON passes (another reader refuses it)."""
    if data.lstrip()[:1] not in (b"{", b"["):
        return
    brackets = _STRINGS.sub(b"", data).translate(None, _NOT_BRACKETS)
    depth = deepest = 0
    for byte in brackets:
        depth += 1 if byte in b"[{" else -1
        if depth > deepest:
            deepest = depth
            if deepest > most:
                raise Invalid(f"{name} nests its JSON more than {most} levels deep; a tokenizer "
                              f"file nests a few levels", field="files")


def check_hf_document(name: str, doc, most_vocab: int) -> None:
    """A ``tokenizer.json``'s vocab size and ids, before its library allocates for them:
    ``Invalid`` for a vocab over ``most_vocab`` entries or an id beyond the vocab's size."""
    if not isinstance(doc, dict) or not isinstance(doc.get("model"), dict):
        return
    model, added = doc["model"], doc.get("added_tokens") or []
    vocab = model.get("vocab")
    size = len(vocab) if isinstance(vocab, (dict, list)) else 0
    if size > most_vocab:
        raise Invalid(f"{name} holds {size:,} vocab entries; the registry keeps tokenizers of "
                      f"at most {most_vocab:,} (MAX_VOCAB_SIZE)", field="files")
    bound = size + (len(added) if isinstance(added, list) else 0)
    ids = []
    if isinstance(vocab, dict):
        ids = [(piece, token_id) for piece, token_id in vocab.items()]
    if isinstance(added, list):
        ids += [(t.get("content"), t.get("id")) for t in added if isinstance(t, dict)]
    for piece, token_id in ids:
        if isinstance(token_id, int) and not isinstance(token_id, bool) and \
                not 0 <= token_id < bound:
            raise Invalid(f"{name} gives {piece!r} the token id {token_id:,}, beyond the vocab's "
                          f"size: its {bound:,} tokens have ids 0 to {bound - 1:,}",
                          field="files")
    unk = model.get("unk_id")
    if model.get("type") == "Unigram" and isinstance(unk, int) and not 0 <= unk < max(size, 1):
        raise Invalid(f"{name} names unk_id {unk:,}, beyond its {size:,} pieces", field="files")


def hf_documents(files: dict[str, bytes]):
    """``(name, parsed JSON)`` of each file that looks like JSON (depth checked first)."""
    for name, data in sorted(files.items()):
        if data.lstrip()[:1] == b"{":
            try:
                yield name, json.loads(data)
            except ValueError:
                continue


def read_checked(files: dict[str, bytes], format: str | None, checks: dict) -> dict:
    """In a sandbox child: the engine of ``files`` refused or described (``{"image": ...}``),
    ``{"none": True}`` when none of them is for an engine."""
    from .files import read_engine_files

    depth, most_vocab = checks.get("max_depth", MAX_DEPTH), checks.get("max_vocab", 1_000_000)
    patterns: list[str] = []
    for name, data in files.items():
        check_json_depth(name, data, depth)
    for name, doc in hf_documents(files):
        check_hf_document(name, doc, most_vocab)
        patterns += _regexes(doc)
    engine = read_engine_files(files, format)
    if engine is None:
        return {"none": True}
    if engine.vocab_size > most_vocab:
        raise Invalid(f"the tokenizer holds {engine.vocab_size:,} tokens; the registry keeps "
                      f"tokenizers of at most {most_vocab:,} (MAX_VOCAB_SIZE)", field="files")
    try_adversarial(engine, patterns, checks.get("growth", 8.0),
                    checks.get("input_seconds", 1.0))
    return {"image": image(engine)}


def _regexes(doc) -> list[str]:
    """The regexes a ``tokenizer.json`` holds (its Split and Replace patterns), wherever."""
    found, stack = [], [doc]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            pattern = node.get("pattern")
            if isinstance(pattern, dict) and isinstance(pattern.get("Regex"), str):
                found.append(pattern["Regex"])
            stack += list(node.values())
        elif isinstance(node, list):
            stack += node
    return found


def try_adversarial(engine, patterns: list[str], growth: float, input_seconds: float) -> None:
    """Encode the inputs the pattern check splits (and every byte) with the library: a
    normalizer that grows text more than ``growth`` times, or an input that takes over
    ``input_seconds``, is refused (``Invalid``) naming it."""
    literals = [c for p in patterns for c in literal_characters(p)]
    normalizer = getattr(getattr(engine, "_ordinary", None), "normalizer", None)
    if normalizer is not None:  # short texts first: a multiplying normalizer shows at once
        for char in dict.fromkeys(literals + list("aZéя中1 .\n'\x01😀")):
            for text in (char * 10, char * RUN_CHARS):
                grown = len(_guarded(f"{len(text):,} {char!r}", normalizer.normalize_str,
                                     text))
                if grown > growth * len(text) + 16:
                    raise Invalid(
                        f"the tokenizer's normalizer turns {len(text):,} {char!r} into "
                        f"{grown:,} characters (over {growth:g} times the text): encoding "
                        f"would use memory without bound", field="files")
    inputs = list(adversarial_inputs("".join(dict.fromkeys(literals))))
    inputs.append(("every byte", bytes(range(256)).decode("latin-1")))
    inputs.append(("every ASCII character repeated", "".join(map(chr, range(128))) * 24))
    for what, text in inputs:
        started = time.process_time()
        _guarded(what, engine.encode_ordinary, text)
        spent = time.process_time() - started
        if spent > input_seconds:
            raise Invalid(f"the tokenizer took {spent:.1f} s to encode {what} (at most "
                          f"{input_seconds:g} s): its regexes backtrack on such text",
                          field="files")


def image(engine, canonical: bool = True) -> dict:
    """An engine as data, for the parent process: ``SandboxedEngine(image)``. The vocab as
    ``ids`` and their ``tokens`` (pieces), the kinds of the pieces that are not ``normal``,
    the scores where the library has them; the canonical file (``canonical``: else only its
    ``digest``, for a parent that holds the file already)."""
    from .registry import engine_digest
    from .frames import b64

    rows = list(engine.vocab_kinds())
    return {"kind": engine.algorithm, "pattern": engine.pattern, "model_type": engine.model_type,
            **({"canonical": b64(engine.canonical)} if canonical else
               {"digest": engine_digest(engine)}),
            "ids": [i for i, _, _, _ in rows],
            "tokens": [token.decode("utf-8", "surrogateescape") for _, token, _, _ in rows],
            "kinds": [[i, kind] for i, _, kind, _ in rows if kind != "normal"],
            "scores": [score for _, _, _, score in rows]
            if any(score is not None for _, _, _, score in rows) else None,
            "merges": [[left.decode("utf-8", "surrogateescape"),
                        right.decode("utf-8", "surrogateescape")] for left, right in engine.merges],
            "special_ids": engine.special_ids, "special_tokens": engine.special_tokens,
            "unk_id": engine.unk_id, "byte_ids": sorted(engine.byte_ids)}


def _guarded(what: str, call, text: str):
    """``call(text)``, its library's error or panic refused in words naming ``what``."""
    try:
        return call(text)
    except Unencodable:  # a character it cannot spell (a Unigram without unk): its encodes
        return None  # answer 422 in words, which is no harm to the service
    except Exception as exc:  # noqa: BLE001 - the library's error, in its words
        raise Invalid(f"the tokenizer's library fails on {what}: {str(exc)[:200]}",
                      field="files") from None
    except BaseException as exc:  # a panic (pyo3's PanicException is no Exception)
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        raise Invalid(f"the tokenizer's library panics on {what} ({str(exc)[:200]}): its "
                      f"regexes backtrack without end on such text", field="files") from None
