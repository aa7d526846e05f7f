"""minbpe's ``.model`` file (Karpathy's minbpe, ``RegexTokenizer.save``).

Text lines: ``minbpe v1``, the split regex (empty for no split), the number of special tokens,
one ``token id`` line per special token, then one ``id1 id2`` line per merge, in rank order.

minbpe's ids are fixed: byte ``b`` is id ``b`` (0..255), merge ``i`` makes id ``256 + i``, and
special tokens come after the merges. Our trained tokenizers put special tokens first
(``0..k-1``), so **an export with k > 0 special tokens renumbers every token**: bytes to 0..255,
merges from 256, special tokens after the last merge, in their order. Re-importing gives the same
merges, the same tokens and the same special tokens, under minbpe's ids; with no special tokens
(and bytes at 0..255, as training makes them) the ids are unchanged.

minbpe cannot hold a token that is neither a byte, a merge result nor a special token, a special
token with whitespace in it, or a pattern with a line break or edge whitespace: ``ValueError``.
"""

from __future__ import annotations

from collections import Counter

from ..pretokenize import NAMED_PATTERNS, pattern_name
from ..tokenizer import Tokenizer
from .common import text_file, to_int

HEADER = "minbpe v1"
SUFFIX = ".model"


def dumps(tokenizer, name: str = "tokenizer") -> dict[str, bytes]:
    """``{"<name>.model": minbpe model text}``."""
    if tokenizer.algorithm != Tokenizer.algorithm:
        raise ValueError(f"minbpe holds byte-level BPE only, not {tokenizer.algorithm!r}")
    _check_tokens(tokenizer)
    lines = [HEADER, _pattern_line(tokenizer.pattern), str(len(tokenizer.special_ids))]
    first_special = 256 + len(tokenizer.merges)
    for offset, token in enumerate(tokenizer.special_ids):
        if token.split() != [token]:
            raise ValueError(f"cannot export to minbpe: special token {token!r} holds whitespace")
        lines.append(f"{token} {first_special + offset}")
    lines += [f"{a} {b}" for a, b in minbpe_merges(tokenizer.merges)]
    return {f"{name}{SUFFIX}": ("\n".join(lines) + "\n").encode()}


def _pattern_line(pattern: str) -> str:
    source = NAMED_PATTERNS.get(pattern, pattern) or ""
    if "\n" in source or "\r" in source or source != source.strip():
        raise ValueError(f"cannot export to minbpe: pattern {pattern!r} has a line break or "
                         f"leading/trailing whitespace, which a .model line cannot hold")
    return source


def _check_tokens(tokenizer) -> None:
    """The non-special tokens must be exactly the 256 bytes plus one result per merge."""
    specials = set(tokenizer.special_ids.values())
    have = Counter(t for i, t in tokenizer.vocab.items() if i not in specials)
    want = Counter([bytes([b]) for b in range(256)] + [a + b for a, b in tokenizer.merges])
    extra = have - want
    if extra:
        raise ValueError(f"cannot export to minbpe: token {min(extra)!r} is neither a byte, a "
                         f"merge result nor a special token")


def minbpe_merges(merges: list[tuple[bytes, bytes]]) -> list[tuple[int, int]]:
    """Merges as minbpe id pairs: ``minbpe_merges([(b"a", b"b"), (b"ab", b"c")]) ->
    [(97, 98), (256, 99)]``. A token made twice keeps its first id."""
    ids = {bytes([b]): b for b in range(256)}
    pairs = []
    for rank, (left, right) in enumerate(merges):
        if left not in ids or right not in ids:
            raise ValueError(f"cannot export to minbpe: merge {rank} ({left!r}, {right!r}) uses "
                             f"a token that no earlier merge made")
        pairs.append((ids[left], ids[right]))
        ids.setdefault(left + right, 256 + rank)
    return pairs


# -- reading ----------------------------------------------------------------------------------

def is_minbpe(data: bytes) -> bool:
    return data.startswith(HEADER.encode())


def loads(data: bytes, name: str = f"tokenizer{SUFFIX}"):
    """A tokenizer from a minbpe ``.model`` file."""
    lines = text_file(data, name)
    if not lines or lines[0] != HEADER:
        raise ValueError(f"{name} is not a minbpe model: its first line is not {HEADER!r}")
    if not data.endswith(b"\n"):  # minbpe ends every line; a cut file would end mid-merge
        raise ValueError(f"{name} is cut short: its last line ({lines[-1]!r:.40}) has no line "
                         f"end, so the file was truncated (a whole .model ends with a newline)")
    if len(lines) < 3:
        raise ValueError(f"{name} is cut short: it needs a pattern line and a special count")
    count = to_int(lines[2], f"{name} line 3")
    special_lines, merge_lines = lines[3:3 + count], lines[3 + count:]
    if len(special_lines) != count:
        raise ValueError(f"{name} announces {count} special tokens but has {len(special_lines)}")
    vocab = {b: bytes([b]) for b in range(256)}
    merges = _read_merges(merge_lines, vocab, name, first_line=4 + count)
    specials = _read_specials(special_lines, vocab, name)
    return Tokenizer(vocab, merges, specials, pattern_name(lines[1]) if lines[1] else "none")


def _read_merges(lines: list[str], vocab: dict[int, bytes], name: str, first_line: int):
    """``id1 id2`` lines -> merges; each merge adds its result to ``vocab`` at ``256 + rank``."""
    merges = []
    for number, line in enumerate(lines, first_line):
        parts = line.split()
        where = f"{name} line {number}"
        if len(parts) != 2:
            raise ValueError(f"{where}: expected 'id1 id2', got {line!r:.80}")
        left, right = (to_int(part, where) for part in parts)
        if left not in vocab or right not in vocab:
            raise ValueError(f"{where}: merge ({left}, {right}) uses an id not made yet")
        merges.append((vocab[left], vocab[right]))
        vocab[256 + len(merges) - 1] = vocab[left] + vocab[right]
    return merges


def _read_specials(lines: list[str], vocab: dict[int, bytes], name: str) -> dict[str, int]:
    specials = {}
    for number, line in enumerate(lines, 4):
        parts = line.split()
        where = f"{name} line {number}"
        if len(parts) != 2:
            raise ValueError(f"{where}: expected 'special-token id', got {line!r:.80}")
        token_id = to_int(parts[1], where)
        if token_id in vocab or parts[0] in specials or token_id < 0:
            raise ValueError(f"{where}: special token {parts[0]!r} id {token_id} is taken")
        vocab[token_id], specials[parts[0]] = parts[0].encode(), token_id
    return specials
