"""The merges a table of ranks implies (tiktoken's rank files, Mistral's tekken.json): each
token of two bytes or more is made by merging, with the ranks below its own, its bytes down to
two parts, which are its merge."""

from __future__ import annotations


def recover_merges(ranks: dict[bytes, int]) -> list[tuple[bytes, bytes]]:
    """The merge that makes each multi-byte token, in rank order.

    ``recover_merges({b"a": 0, b"b": 1, b"ab": 2}) -> [(b"a", b"b")]``
    """
    merges = []
    for token, rank in sorted(ranks.items(), key=lambda item: item[1]):
        if len(token) > 1:
            merges.append(_split_in_two(token, rank, ranks))
    return merges


def _split_in_two(token: bytes, limit: int, ranks: dict[bytes, int]) -> tuple[bytes, bytes]:
    """Merge the bytes of ``token`` with the ranks below ``limit``, lowest rank first (the
    leftmost of equal ranks); two parts must remain. Each merge looks up only the two pairs it
    changes. ``_split_in_two(b"abc", 3, {b"ab": 1, b"bc": 2}) -> (b"ab", b"c")``"""
    get = ranks.get
    parts = [token[i:i + 1] for i in range(len(token))]
    pair_ranks = [get(a + b, limit) for a, b in zip(parts, parts[1:])]
    while len(parts) > 2:
        best = min(pair_ranks)
        if best >= limit:
            break
        i = pair_ranks.index(best)
        parts[i:i + 2] = [parts[i] + parts[i + 1]]
        del pair_ranks[i]
        if i < len(pair_ranks):
            pair_ranks[i] = get(parts[i] + parts[i + 1], limit)
        if i:
            pair_ranks[i - 1] = get(parts[i - 1] + parts[i], limit)
    if len(parts) != 2:
        raise ValueError(f"token {token!r} (rank {limit}) is not made by merging two tokens of "
                         f"lower rank")
    return parts[0], parts[1]
