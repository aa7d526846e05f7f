"""Checks of values shared by the core and the registry, each written once."""

from __future__ import annotations


def is_int(value) -> bool:
    """An ``int`` that is not a ``bool`` (JSON's ``true`` must not pass for 1):
    ``is_int(3) -> True``, ``is_int(True) -> False``, ``is_int(3.0) -> False``."""
    return isinstance(value, int) and not isinstance(value, bool)
