"""What changed between two tokenizers: the verdict on their ids, the tokens added and removed,
the merges added, and how much of a text encodes to other ids.

Verdicts, from the point of view of a model trained on ``from`` (one embedding row per id):

- ``identical``: the same ids for the same tokens, the same merges;
- ``extends``: every id of ``from`` names the same token (with the same role) in ``to``, which
  has more; the rows only grow (``new_ids`` gives the range);
- ``same_tokens_other_ids``: the same tokens, some under other ids (``id_map``: old -> new);
- ``incompatible``: ``changed`` ids of ``from`` name another token in ``to`` (or none); or
  every id keeps its token but ``to``'s merges do not begin with ``from``'s (the same text
  may then encode to other ids).

Tokens are ``bytes`` (a character-level token is its UTF-8); a special token is compared with
its role: a special token and a plain token of the same bytes are different tokens.
"""

from __future__ import annotations

from dataclasses import dataclass, field

Vocab = dict[int, bytes]

IDENTICAL, EXTENDS = "identical", "extends"
SAME_TOKENS, INCOMPATIBLE = "same_tokens_other_ids", "incompatible"


@dataclass
class VocabDiff:
    verdict: str
    changed: list[tuple[int, bytes, bytes | None]] = field(default_factory=list)
    id_map: dict[int, int] = field(default_factory=dict)
    new_ids: tuple[int, int] | None = None  # first and last new id, for ``extends``
    added: list[tuple[int, bytes]] = field(default_factory=list)  # (id in to, token)
    removed: list[tuple[int, bytes]] = field(default_factory=list)  # (id in from, token)
    merges_added: int = 0
    merges_removed: int = 0

    @property
    def keeps_ids(self) -> bool:
        """Whether a model trained on ``from`` reads ``to``'s ids right (identical, extends)."""
        return self.verdict in (IDENTICAL, EXTENDS)


def diff_vocabs(old: Vocab, new: Vocab, old_specials=(), new_specials=(),
                old_merges=(), new_merges=()) -> VocabDiff:
    """``diff_vocabs({0: b"a"}, {0: b"a", 1: b"b"}).verdict -> "extends"`` (new ids 1..1);
    ``diff_vocabs({0: b"a", 1: b"b"}, {0: b"b", 1: b"a"}).id_map -> {0: 1, 1: 0}``."""
    old_keyed = _keyed(old, old_specials)
    new_keyed = _keyed(new, new_specials)
    changed = [(i, old[i], new.get(i)) for i in sorted(old) if new_keyed.get(i) != old_keyed[i]]
    old_tokens, new_tokens = _ids_of(old_keyed), _ids_of(new_keyed)
    added = sorted((new_tokens[k], k[1]) for k in new_tokens.keys() - old_tokens.keys())
    removed = sorted((old_tokens[k], k[1]) for k in old_tokens.keys() - new_tokens.keys())
    merges_added = len(set(new_merges) - set(old_merges))
    merges_removed = len(set(old_merges) - set(new_merges))
    found = VocabDiff(INCOMPATIBLE, changed, added=added, removed=removed,
                      merges_added=merges_added, merges_removed=merges_removed)
    if not changed:
        extra = sorted(set(new) - set(old))
        same_merges = list(new_merges[:len(old_merges)]) == list(old_merges)
        if not extra and same_merges and len(new_merges) == len(old_merges):
            found.verdict = IDENTICAL
        elif same_merges:
            found.verdict = EXTENDS
            found.new_ids = (extra[0], extra[-1]) if extra else None
        return found
    if not added and not removed:
        found.verdict = SAME_TOKENS
        found.id_map = {i: new_tokens[old_keyed[i]] for i, _, _ in changed}
    return found


def _keyed(vocab: Vocab, specials) -> dict[int, tuple[bool, bytes]]:
    """Each id's token with its role: ``(is special, bytes)``."""
    special = {token.encode() if isinstance(token, str) else token for token in specials}
    return {i: (token in special, bytes(token)) for i, token in vocab.items()}


def _ids_of(keyed: dict[int, tuple[bool, bytes]]) -> dict[tuple[bool, bytes], int]:
    """Token -> its lowest id."""
    found: dict[tuple[bool, bytes], int] = {}
    for i in sorted(keyed, reverse=True):
        found[keyed[i]] = i
    return found


def diff_encodings(old_encode, new_encode, lines: list[str]) -> dict:
    """Encode each line with both; the lines whose ids are unchanged and the tokens before and
    after, in all and per script (``script_of`` the line's first letter).

    ``diff_encodings(str.split, str.split, ["a b"]) -> {"lines": 1, "unchanged_lines": 1, ...}``
    """
    totals = {"lines": 0, "unchanged_lines": 0, "tokens_before": 0, "tokens_after": 0}
    scripts: dict[str, dict[str, int]] = {}
    for line in lines:
        before, after = old_encode(line), new_encode(line)
        script = scripts.setdefault(script_of(line), {"lines": 0, "unchanged_lines": 0,
                                                      "tokens_before": 0, "tokens_after": 0})
        for place in (totals, script):
            place["lines"] += 1
            place["unchanged_lines"] += list(before) == list(after)
            place["tokens_before"] += len(before)
            place["tokens_after"] += len(after)
    return {**totals, "scripts": dict(sorted(scripts.items()))}


SCRIPTS = [("Han", 0x4E00, 0x9FFF), ("Hiragana/Katakana", 0x3040, 0x30FF),
           ("Hangul", 0xAC00, 0xD7A3), ("Cyrillic", 0x0400, 0x04FF), ("Greek", 0x0370, 0x03FF),
           ("Arabic", 0x0600, 0x06FF), ("Devanagari", 0x0900, 0x097F), ("Latin", 0x41, 0x24F)]


def script_of(line: str) -> str:
    """The script of the line's first letter: ``script_of("12 数字") -> "Han"``; a line without
    a letter is ``"none"``; a letter of no listed script, ``"other"``."""
    for char in line:
        if char.isalpha():
            point = ord(char)
            return next((name for name, low, high in SCRIPTS if low <= point <= high), "other")
    return "none"
