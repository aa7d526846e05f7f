"""A pair of adjacent token ids packed into one int: ``left << SHIFT | right``. Training's merge
loop and encoding's merge table both key pairs this way (an int hashes and stores for less than
a tuple); the hot loops use ``SHIFT`` and ``LOW`` inline, these helpers read it elsewhere.

``pack(3, 7) -> 12884901895``; ``unpack(12884901895) -> (3, 7)``. Ids must be below ``1 << 32``.
"""

from __future__ import annotations

SHIFT = 32
LOW = (1 << SHIFT) - 1  # the bits of the right id


def pack(left: int, right: int) -> int:
    """``pack(3, 7) -> 3 << 32 | 7``"""
    return left << SHIFT | right


def unpack(pair: int) -> tuple[int, int]:
    """``unpack(pack(3, 7)) -> (3, 7)``"""
    return pair >> SHIFT, pair & LOW
