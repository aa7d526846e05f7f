"""subword-nmt's codes file, for character-level BPE: ``codes.txt`` and ``vocab.json``.

``codes.txt`` is what ``subword-nmt learn-bpe`` writes and ``subword-nmt apply-bpe -c codes.txt``
reads: a ``#version: 0.2`` header, then one merge a line, ``left right`` in rank order, the
end-of-word suffix ``</w>`` glued to a word's last symbol (``e r</w>``). ``vocab.json`` (token ->
id, as in the ``gpt2`` format) keeps the registry's ids, so an import gives back the same
version; apply-bpe needs only the codes.

The files hold no split and no lowercasing: on import the split is ``whitespace`` and nothing is
lowercased (apply-bpe splits at spaces and lowercases nothing either). A codes file alone is read
too: its ids are then ``<unk>``, the symbols the merges are made of (those no merge makes,
sorted by UTF-8 bytes), then one per merge, as training lays them out.
"""

from __future__ import annotations

from ..char_tokenizer import UNK, CharBPETokenizer
from . import gpt2
from .char_level import SUFFIX, gpt2_tokenizer
from .common import text_file
from .gpt2 import VOCAB, read_merges, read_vocab

CODES = "codes.txt"
HEADER = "#version: 0.2"


def dumps(tokenizer, name: str = "tokenizer") -> dict[str, bytes]:
    """``{"codes.txt": ..., "vocab.json": ...}`` (the name is not used: the file names are
    fixed)."""
    if tokenizer.algorithm != "char_bpe":
        raise ValueError("subword-nmt codes hold character-level BPE (merges with '</w>'), not "
                         f"a {tokenizer.algorithm} tokenizer")
    files = gpt2.dumps(tokenizer)  # the same vocab.json, and merges.txt is a codes file
    return {CODES: files[gpt2.MERGES], VOCAB: files[VOCAB]}


def is_codes(name: str, data: bytes) -> bool:
    """Whether a file is a codes file: its first line is ``#version: 0.2``."""
    return data.split(b"\n", 1)[0].rstrip(b"\r ") == HEADER.encode()


def codes_name(files: dict[str, bytes]) -> str | None:
    """The codes file among ``files``, if exactly one."""
    names = [name for name, data in files.items() if is_codes(name, data)]
    return names[0] if len(names) == 1 else None


def loads(files: dict[str, bytes]) -> CharBPETokenizer:
    """A ``CharBPETokenizer`` from a codes file (and ``vocab.json`` when given)."""
    name = codes_name(files)
    if name is None:
        raise ValueError(f"subword-nmt files need one codes file starting {HEADER!r} "
                         f"(got {', '.join(sorted(files))})")
    lines = text_file(files[name], name)
    if lines[0].strip() != HEADER:
        raise ValueError(f"{name}: only codes of {HEADER!r} are read, got {lines[0]!r:.40}")
    merges = read_merges(files[name])
    if merges and not any(right.endswith(SUFFIX) for _, right in merges):
        raise ValueError(f"{name} holds no merge with {SUFFIX!r}: these are not character-level "
                         f"BPE codes (a GPT-2 merges.txt is read with its vocab.json beside it)")
    for rank, (left, right) in enumerate(merges):
        if SUFFIX in left or (SUFFIX in right and not right.endswith(SUFFIX)):
            raise ValueError(f"{name} line {rank + 2}: {SUFFIX!r} may only end a merge's right "
                             f"part, got {left} {right}")
    if VOCAB in files:
        return gpt2_tokenizer(read_vocab(files[VOCAB]), merges)
    made = {left + right for left, right in merges}
    alphabet = sorted({part for pair in merges for part in pair if part not in made},
                      key=str.encode)
    tokens = [UNK, *alphabet, *dict.fromkeys(left + right for left, right in merges)]
    return CharBPETokenizer(dict(enumerate(tokens)), merges, [UNK], UNK, SUFFIX)
