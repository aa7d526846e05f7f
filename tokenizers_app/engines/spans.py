"""Byte spans of the tokens of an engine, made fit for colouring: in order, never overlapping,
the byte pieces of one character each given one of its bytes.

The libraries give offsets as characters (Hugging Face) or bytes (SentencePiece). Byte-fallback
pieces of one character share its span (HF) or sit at zero width before it (SentencePiece); a
prepended ``▁`` shares the span of the first character (HF's Metaspace).
"""

from __future__ import annotations

import operator
from itertools import accumulate, chain, compress


def char_to_byte_offsets(text: str) -> list[int]:
    """Byte offset of each character offset: ``char_to_byte_offsets("aé") -> [0, 1, 3]``."""
    if text.isascii():
        return list(range(len(text) + 1))
    return list(accumulate((len(c.encode()) for c in text), initial=0))


def tidy_spans(spans: list[tuple[int, int]], is_byte: list[bool]) -> list[tuple[int, int]]:
    """Spread each run of byte pieces over its bytes when it has one piece per byte; a token
    sharing its span with the next becomes zero-width at its start; then no span starts before
    the previous one ends. ``tidy_spans([(0, 3)] * 3, [True] * 3) -> [(0, 1), (1, 2), (2, 3)]``;
    ``tidy_spans([(0, 1), (0, 1)], [False, False]) -> [(0, 0), (0, 1)]``."""
    spans = list(spans)
    if any(is_byte):
        _spread_byte_runs(spans, is_byte)
    following = spans[1:] + [(-1, -1)]
    spans = [(span[0], span[0]) if span == after and span[0] < span[1] else span
             for span, after in zip(spans, following)]
    starts, ends = [s for s, _ in spans], [e for _, e in spans]
    if all(map(operator.le, ends, starts[1:])) and all(map(operator.le, starts, ends)):
        return spans  # in order already (the usual case): no clamping
    tidy, last = [], 0
    for start, end in spans:
        start = max(start, last)
        end = max(end, start)
        tidy.append((start, end))
        last = end
    return tidy


def span_columns(spans: list[tuple[int, int, int]]) -> tuple[list, list, list]:
    """``(id, start, end)`` spans as three lists: ``span_columns([(7, 0, 2)]) -> ([7], [0],
    [2])``."""
    if not spans:
        return [], [], []
    ids, starts, ends = map(list, zip(*spans))
    return ids, starts, ends


def tidy_columns(starts: list[int], ends: list[int]) -> tuple[list[int], list[int]]:
    """``tidy_spans`` of spans without byte pieces, as columns (in place, and returned):
    ``tidy_columns([0, 0], [1, 1]) -> ([0, 0], [0, 1])``."""
    for index in [i for i in compress(range(len(starts) - 1), map(operator.eq, starts, starts[1:]))
                  if ends[i] == ends[i + 1] and starts[i] < ends[i]]:
        ends[index] = starts[index]
    if all(map(operator.le, ends, starts[1:])) and all(map(operator.le, starts, ends)):
        return starts, ends
    last = 0
    for index, (start, end) in enumerate(zip(starts, ends)):
        start = max(start, last)
        end = max(end, start)
        starts[index], ends[index] = start, end
        last = end
    return starts, ends


def _spread_byte_runs(spans: list[tuple[int, int]], is_byte: list[bool]) -> None:
    """Give each piece of a run of byte pieces one byte, when the run has one piece per byte
    of the text it spans (in place)."""
    index = 0
    while index < len(spans):
        if not is_byte[index]:
            index += 1
            continue
        end = index
        while end + 1 < len(spans) and is_byte[end + 1]:
            end += 1
        low = min(s for s, _ in spans[index:end + 1])
        high = max(e for _, e in spans[index:end + 1])
        if high - low == end + 1 - index:  # one byte each
            spans[index:end + 1] = [(b, b + 1) for b in range(low, high)]
        index = end + 1


def with_ids(ids: list[int], spans: list[tuple[int, int]],
             offset: int = 0) -> list[tuple[int, int, int]]:
    """``(id, start, end)`` per token, the spans moved by ``offset`` bytes:
    ``with_ids([7], [(0, 2)], 3) -> [(7, 3, 5)]`` (no new numbers made when ``offset`` is 0)."""
    if not offset:
        return [(i, s, e) for i, (s, e) in zip(ids, spans)]
    return [(i, offset + s, offset + e) for i, (s, e) in zip(ids, spans)]


def joined_cuts(offsets: list[list[int]], sizes, counts, places):
    """The token spans of many texts at once, as two arrays of byte offsets in the texts joined
    (numpy): text ``k`` has ``counts[k]`` tokens, whose normalized lengths are its run of
    ``sizes`` (in order, all texts), ``offsets[k]`` maps each normalized byte (and the end) to
    its byte in the text, and the text starts at byte ``places[k]`` of the whole. Token ``j``
    of text ``k`` spans ``offsets[k][c_j]`` to ``offsets[k][c_j + sizes_j]``, ``c_j`` the sum of
    the sizes before it in its text (``SentencePieceEngine.span_columns``, per text):
    ``joined_cuts([[0, 1, 2], [0, 1]], [1, 1, 1], [2, 1], [0, 2]) -> ([0, 1, 2], [1, 2, 3])``
    (as arrays)."""
    import numpy as np

    lengths = np.fromiter(map(len, offsets), np.int64, len(offsets))
    flat = np.fromiter(chain.from_iterable(offsets), np.int64, int(lengths.sum()))
    return flat_cuts(flat, lengths, sizes, counts, places)


def flat_cuts(flat, lengths, sizes, counts, places):
    """``joined_cuts`` of the texts' offsets given as one array ``flat``, text ``k``'s
    ``lengths[k]`` offsets after the texts' before it (``spm_offsets.NormalizedOffsets``)."""
    import numpy as np

    sizes = np.asarray(sizes, dtype=np.int64)
    counts = np.asarray(counts, dtype=np.int64)
    bases = np.cumsum(lengths) - lengths  # where each text's offsets start in ``flat``
    before = np.cumsum(sizes) - sizes  # the sizes before each token, all texts
    firsts = np.cumsum(counts) - counts  # each text's first token
    at_first = np.append(before, 0)[firsts]
    cut = before + np.repeat(bases - at_first, counts)
    moved = np.repeat(np.asarray(places, dtype=np.int64), counts)  # each token's text's place
    return flat[cut] + moved, flat[cut + sizes] + moved
