"""The counts of a batch of documents at once, from its tokens as arrays (numpy) over the
documents joined (an engine's ``batch_columns``, SentencePiece's): the per-token and per-word
work of ``evaluation.documents_totals`` done by a few array operations per batch instead of
Python per document, giving the same numbers.

- the words are the whitespace-separated words (``baselines.WORD_RE``: runs of characters that
  are not Unicode White_Space), found on the UTF-8 bytes: a byte table for ASCII, and the few
  wider White_Space characters found by a bytes pattern (UTF-8 only matches them whole);
- a word ``(a, b)`` is split when 2+ tokens touch it: those that end after ``a`` and start
  before ``b`` (``evaluation.count_split_words``). Over the joined documents the count is the
  same as document by document: every token of an earlier document ends at or before ``a`` and
  starts before ``b``, every token of a later one starts at or after ``b``; so it holds when the
  starts and the ends are each in order (checked; else the caller counts per document).

And what any evaluation's batches share: the garbage collector paused while a batch is counted
and merged (``gc_paused``), a batch's totals merged without copying them (``merge_part``).
"""

from __future__ import annotations

import gc
import importlib.util
import re
from collections import Counter
from contextlib import contextmanager

# Unicode White_Space: the characters ``WORD_RE`` never puts in a word (tests check the list)
WHITESPACE = ("\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B)))
              + "\u2028\u2029\u202f\u205f\u3000")
_WIDE = re.compile(b"|".join(re.escape(c.encode()) for c in WHITESPACE if ord(c) > 0x7F))
_tables: dict[str, object] = {}


def word_bounds(data: bytes):
    """The byte spans of the words of UTF-8 text, as two arrays (starts, ends):
    ``word_bounds(b" ab  \\xc3\\xa9") -> ([1, 5], [3, 7])``."""
    import numpy as np

    if "ascii" not in _tables:
        table = np.zeros(256, dtype=bool)
        table[[ord(c) for c in WHITESPACE if ord(c) < 0x80]] = True
        _tables["ascii"] = table
    space = _tables["ascii"][np.frombuffer(data, dtype=np.uint8)]
    if not data.isascii():
        for match in _WIDE.finditer(data):
            space[match.start():match.end()] = True
    edges = np.diff(np.concatenate(([0], (~space).view(np.int8), [0])))
    return np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)


def split_count(word_starts, word_ends, starts, ends) -> int | None:
    """Words touched by 2+ tokens (the module's note), or None when the tokens' starts or
    ends are not in order: ``split_count([0], [5], [0, 3], [3, 5]) -> 1``."""
    import numpy as np

    starts, ends = np.asarray(starts), np.asarray(ends)
    if np.any(starts[1:] < starts[:-1]) or np.any(ends[1:] < ends[:-1]):
        return None
    touched = (np.searchsorted(starts, word_ends, "left")
               - np.searchsorted(ends, word_starts, "right"))
    return int(np.count_nonzero(touched > 1))


def id_counts(ids) -> Counter:
    """How many times each id occurs in an array of ids: ``id_counts([3, 1, 3]) -> Counter({3:
    2, 1: 1})``."""
    import numpy as np

    found = Counter()
    if len(ids):
        counted = np.bincount(ids)
        present = np.flatnonzero(counted)
        found.update(dict(zip(present.tolist(), counted[present].tolist())))
    return found


def texts_with(mask, firsts) -> list[int]:
    """The texts holding a token that ``mask`` marks, text ``k``'s tokens starting at
    ``firsts[k]`` (texts without tokens share the next one's first): ``texts_with([False,
    True, True], [0, 1, 1, 2]) -> [2, 3]``."""
    import numpy as np

    return sorted(set((np.searchsorted(firsts, np.flatnonzero(mask), "right") - 1).tolist()))


def text_of_tokens(id_lists: list[list[int]]):
    """Each token's text, an array: ``text_of_tokens([[5, 6], [], [7]]) -> [0, 0, 2]``."""
    import numpy as np

    sizes = np.fromiter(map(len, id_lists), np.int64, len(id_lists))
    return np.repeat(np.arange(len(id_lists)), sizes)


def isin(ids, chosen: list[int]):
    """Which of an array's ids are among ``chosen`` (an array of booleans)."""
    import numpy as np

    return np.isin(ids, chosen)


def numpy_found() -> bool:
    """Whether numpy can be imported (else the evaluation counts document by document)."""
    if "numpy" not in _tables:
        _tables["numpy"] = importlib.util.find_spec("numpy") is not None
    return bool(_tables["numpy"])


@contextmanager
def gc_paused():
    """The cyclic garbage collector paused, then restored as it was: a batch makes some 10^5
    small lists and dicts and no cycles, and each few hundred of them set the collector off to
    walk the process's tracked objects (a fifth to a third of a SentencePiece evaluation's
    processor time)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def merge_part(found, part) -> None:
    """``found.merge(part)`` for a part not used again: its words' ``[count, covered]`` lists
    are taken over rather than copied, each word looked up once."""
    found.counts.update(part.counts)
    found.ids.update(part.ids)
    found.seconds += part.seconds
    if not found.words:
        found.words = part.words
        return
    words = found.words
    get = words.get
    for word, value in part.words.items():
        mine = get(word)
        if mine is None:
            words[word] = value
        else:
            mine[0] += value[0]


def run_chars(data: bytes, chosen, starts, ends, doc) -> int:
    """``evaluation._chars_in`` of every text at once: the characters of the UTF-8 ``data``
    spelled by each run of consecutive tokens that ``chosen`` (booleans) marks within one text
    (``doc``: each token's text), a run spanning from its first token's start to its last one's
    end. A run's bytes decoded with replacement give one character per byte that is not a
    continuation byte (``10xxxxxx``) when both its ends fall on characters' starts (or the
    end of ``data``: ``data`` is valid UTF-8, so the run is whole characters); any other run is
    decoded: ``run_chars(b"a\\xc3\\xa9b", [True, True, False], [0, 1, 3], [1, 3, 4], [0, 0, 0])
    -> 2``."""
    import numpy as np

    chosen, doc = np.asarray(chosen, bool), np.asarray(doc)
    same = doc[1:] == doc[:-1]
    linked = chosen[1:] & chosen[:-1] & same  # token i + 1 goes on token i's run
    firsts = np.flatnonzero(chosen & ~np.concatenate(([False], linked)))
    lasts = np.flatnonzero(chosen & ~np.concatenate((linked, [False])))
    low, high = np.asarray(starts)[firsts], np.asarray(ends)[lasts]
    lead = (np.frombuffer(data, np.uint8) & 0xC0) != 0x80
    edge = np.concatenate((lead, [True]))  # where a character starts, or the end
    count = np.zeros(len(data) + 1, np.int64)
    np.cumsum(lead, out=count[1:])
    size = len(data)
    wide = high > low
    low_in, high_in = np.minimum(low, size), np.minimum(high, size)
    whole = wide & edge[low_in] & edge[high_in] & (high <= size)
    found = int((count[high_in[whole]] - count[low_in[whole]]).sum())
    for a, b in zip(low[wide & ~whole].tolist(), high[wide & ~whole].tolist()):
        found += len(data[a:b].decode("utf-8", errors="replace"))
    return found
