"""Tokenizer file formats, one module per format, behind four functions.

``dumps_tokenizer(tokenizer, "hf") -> {"tokenizer.json": b"..."}`` and ``loads_tokenizer(files)``
work on file contents (for downloads and uploads); ``save_tokenizer`` and ``load_tokenizer`` wrap
them for paths. Formats:

- ``native``: our JSON (``native.py``), exact, with merge counts; round-trips byte for byte.
- ``hf``: Hugging Face ``tokenizer.json`` (``hf_json.py``).
- ``gpt2``: a folder with ``vocab.json`` and ``merges.txt`` (``gpt2.py``).
- ``tiktoken``: ``<name>.tiktoken`` rank file plus ``<name>.json`` sidecar (``tiktoken.py``).
- ``minbpe``: minbpe's ``<name>.model`` (``minbpe.py``; renumbers ids, see there).
- ``transformers``: a folder that ``AutoTokenizer.from_pretrained`` loads (``transformers.py``).
- ``tekken``: Mistral's ``tekken.json`` (``tekken.py``), byte-level BPE with special slots.
- ``subword-nmt``: ``codes.txt`` (``subword-nmt apply-bpe -c``) and ``vocab.json``, for
  character-level BPE (``subword_nmt.py``).

A format holds byte-level BPE (``BYTE_FORMATS``), character-level BPE (``CHAR_FORMATS``) or both;
writing a tokenizer in one that cannot hold it is a ``ValueError`` naming those that can.

Every output is deterministic: the same tokenizer gives byte-identical files.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..atomic_files import write_files as _write
from . import gpt2, hf_json, minbpe, native, subword_nmt, tekken, tiktoken, transformers
from .common import parse_json

FORMATS = ("native", "hf", "gpt2", "tiktoken", "minbpe", "transformers", "tekken", "subword-nmt")
BYTE_FORMATS = ("native", "hf", "gpt2", "tiktoken", "minbpe", "transformers", "tekken")
CHAR_FORMATS = ("native", "hf", "gpt2", "subword-nmt")
KIND_FORMATS = {"byte_bpe": BYTE_FORMATS, "char_bpe": CHAR_FORMATS}
_SINGLE_FILE = {"native": native, "hf": hf_json, "minbpe": minbpe, "tekken": tekken}
_SUFFIXES = (".json", ".txt", ".tiktoken", ".model")
FOLDER_FORMATS = ("gpt2", "transformers", "subword-nmt")  # written as a folder of files
KIND_NAMES = {"byte_bpe": "byte-level BPE", "char_bpe": "character-level BPE"}


def check_format(format: str, algorithm: str | None = None) -> str:
    """The format, known and (given a tokenizer's ``algorithm``) able to hold that kind:
    ``check_format("tiktoken", "char_bpe")`` raises, naming native, hf, gpt2, subword-nmt."""
    if format not in FORMATS:
        raise ValueError(f"unknown format {format!r}; choose one of {', '.join(FORMATS)}")
    able = KIND_FORMATS.get(algorithm, FORMATS)
    if format not in able:
        raise ValueError(f"the {format} format cannot hold {KIND_NAMES.get(algorithm, algorithm)}"
                         f"; download it as one of {', '.join(able)}")
    return format


def dumps_tokenizer(tokenizer, format: str = "native", name: str = "tokenizer") -> dict[str, bytes]:
    """The files of ``tokenizer`` in ``format`` as ``{file name: content}``.

    ``dumps_tokenizer(tok, "tiktoken", "web") -> {"web.tiktoken": ..., "web.json": ...}``
    """
    module = {"gpt2": gpt2, "tiktoken": tiktoken, "transformers": transformers,
              "subword-nmt": subword_nmt,
              **_SINGLE_FILE}[check_format(format, tokenizer.algorithm)]
    return module.dumps(tokenizer, name)


PATTERNLESS_FORMATS = ("gpt2", "tiktoken")  # files that may hold no pattern: the reader is told
GIVEN_PATTERN = ("GPT-2 files (vocab.json + merges.txt) and bare tiktoken rank files, which hold "
                 "none")


def loads_tokenizer(files: dict[str, bytes], format: str | None = None,
                    pattern: str | None = None, special_tokens: dict[str, int] | None = None):
    """A tokenizer from file contents ``{file name: bytes}``; the format is detected when not
    given. ``pattern`` is for files that hold none (GPT-2's, ``gpt2`` assumed when not given; a
    bare tiktoken rank file's, with its ``special_tokens``); other files name their own, so a
    pattern given for them is a ``ValueError``, as is a file that is not a tokenizer."""
    if not files:
        raise ValueError("no tokenizer files given")
    format = check_format(format) if format else detect_format(files)
    if pattern is not None and format not in PATTERNLESS_FORMATS:
        raise ValueError(f"{format} files name their own pattern; a pattern is given only for "
                         f"{GIVEN_PATTERN}")
    if special_tokens is not None and format != "tiktoken":
        raise ValueError(f"{format} files name their own special tokens; special tokens are "
                         f"given only for bare tiktoken rank files")
    if format == "gpt2":
        return gpt2.loads(files, pattern)
    if format == "tiktoken":
        return tiktoken.loads(files, pattern, special_tokens)
    if format == "transformers":
        return transformers.loads(files)
    if format == "subword-nmt":
        return subword_nmt.loads(files)
    name = _pick(files, format)
    return _SINGLE_FILE[format].loads(files[name], name)


def detect_format(files: dict[str, bytes]) -> str:
    """``detect_format({"vocab.json": ..., "merges.txt": ...}) -> "gpt2"``; a JSON with
    ``"model"`` is ``hf``, ours is ``native``, a ``base64 rank`` file is ``tiktoken``, a file
    starting ``minbpe v1`` is ``minbpe``."""
    if gpt2.VOCAB in files and gpt2.MERGES in files:
        return "gpt2"
    if transformers.CONFIG in files and hf_json.FILE_NAME in files:
        return "transformers"
    if subword_nmt.codes_name(files) is not None:
        return "subword-nmt"
    kinds = {_detect_file(name, data) for name, data in files.items()}
    for format in ("native", "hf", "tekken", "tiktoken", "minbpe"):
        if format in kinds:
            return format
    raise ValueError(f"cannot tell the tokenizer format of {', '.join(sorted(files))}: expected "
                     f"{' / '.join(FORMATS)} files")


def _detect_file(name: str, data: bytes) -> str | None:
    if minbpe.is_minbpe(data):
        return "minbpe"
    if name.endswith(tiktoken.SUFFIX) or (not name.endswith(".json")
                                          and tiktoken.is_rank_file(data)):
        return "tiktoken"
    if data.lstrip()[:1] != b"{":
        return None
    try:
        doc = parse_json(data, name)
    except ValueError:
        return None
    if tekken.is_tekken(doc):
        return "tekken"
    return "native" if native.is_native(doc) else "hf" if hf_json.is_hf(doc) else None


def _pick(files: dict[str, bytes], format: str) -> str:
    """The one file of ``files`` that holds a tokenizer in a single-file format."""
    if len(files) == 1:
        return next(iter(files))
    names = [n for n, data in files.items() if _detect_file(n, data) == format]
    if len(names) > 1 and "tokenizer.json" in names:
        return "tokenizer.json"
    if len(names) != 1:
        raise ValueError(f"expected one {format} file among {', '.join(sorted(files))}, "
                         f"found {len(names)}")
    return names[0]


def save_tokenizer(tokenizer, path, format: str = "native") -> list[Path]:
    """Write ``tokenizer`` to ``path`` in ``format``; returns the files written.

    ``gpt2`` writes ``vocab.json`` and ``merges.txt`` into the folder ``path`` (``transformers``
    its three files); ``tiktoken``
    writes the rank file to ``path`` and its sidecar to ``path`` with suffix ``.json``; the other
    formats write one file to ``path``. When ``path`` is an existing folder, every format writes
    its default file names (``tokenizer.json``, ``tokenizer.tiktoken``, ...) into it.
    """
    path = Path(path)
    check_format(format)
    into_folder = format in FOLDER_FORMATS or path.is_dir()
    files = dumps_tokenizer(tokenizer, format, **({} if into_folder else {"name": path.stem}))
    return write_tokenizer_files(files, path, format)


def write_tokenizer_files(files: dict[str, bytes], path, format: str) -> list[Path]:
    """Write the files of a tokenizer in ``format`` (as ``dumps_tokenizer`` gives them) to
    ``path``, as ``save_tokenizer`` places them: into the folder ``path`` under their own names
    (``gpt2``, or an existing folder), else the first file at ``path`` and a tiktoken sidecar
    beside it."""
    path = Path(path)
    check_format(format)
    if format in FOLDER_FORMATS or path.is_dir():
        path.mkdir(parents=True, exist_ok=True)
        return _write(path, files)
    if format == "tiktoken" and path.suffix == ".json":
        raise ValueError(f"{path}: a tiktoken rank file cannot end in .json (its sidecar does)")
    targets = [path] + ([_sidecar_target(path)] if format == "tiktoken" else [])
    return _write(path.parent, dict(zip([t.name for t in targets], files.values())))


def _sidecar_target(path: Path) -> Path:
    """Where a rank file's sidecar goes; never over a file that is not an old sidecar."""
    sidecar = path.with_suffix(".json")
    if sidecar.is_file() and not tiktoken.is_sidecar(sidecar.read_bytes()):
        raise ValueError(f"{sidecar} exists and is not a tiktoken sidecar; the rank file "
                         f"{path.name} needs that name for its sidecar: choose another name")
    return sidecar


def load_tokenizer(path, format: str | None = None):
    """Read a tokenizer from a file or a folder; the format is detected when not given."""
    return loads_tokenizer(read_tokenizer_files(path), format)


def read_tokenizer_files(path, max_bytes: int | None = None) -> dict[str, bytes]:
    """``{file name: bytes}`` of the tokenizer at ``path``: a folder's tokenizer files, or one
    file (with the ``.json`` sidecar of a ``.tiktoken`` rank file; one of GPT-2's two files
    reads both). Files over ``max_bytes`` in all are refused by their size, before any is read."""
    path = Path(path)
    if path.name in (gpt2.VOCAB, gpt2.MERGES) and path.is_file():
        path = path.parent
    if max_bytes is not None:
        found = [p for p in path.iterdir() if p.is_file() and p.suffix in _SUFFIXES] \
            if path.is_dir() else [path] if path.is_file() else []
        size = sum(p.stat().st_size for p in found)
        if size > max_bytes:
            raise ValueError(f"the tokenizer files hold {size} bytes, over the limit of "
                             f"{max_bytes} bytes (TOKENIZER_IMPORT_MAX_BYTES): nothing was read")
    if path.is_dir():
        files = {p.name: p.read_bytes() for p in sorted(path.iterdir())
                 if p.is_file() and p.suffix in _SUFFIXES}
    elif path.is_file():
        files = {path.name: path.read_bytes()}
        sidecar = path.with_suffix(".json")
        if sidecar != path and sidecar.is_file() and _detect_file(path.name, files[path.name]) \
                == "tiktoken":
            files[sidecar.name] = sidecar.read_bytes()
    else:
        raise ValueError(f"no tokenizer file or folder at {os.fspath(path)!r}")
    if not files:
        raise ValueError(f"the folder {os.fspath(path)!r} holds no tokenizer files")
    return files


__all__ = ["BYTE_FORMATS", "GIVEN_PATTERN", "CHAR_FORMATS", "FORMATS", "KIND_FORMATS", "PATTERNLESS_FORMATS", "detect_format", "dumps_tokenizer", "load_tokenizer", "loads_tokenizer",
           "read_tokenizer_files", "save_tokenizer", "write_tokenizer_files"]
