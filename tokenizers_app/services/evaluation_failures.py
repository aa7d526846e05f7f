"""Why an evaluation failed, in words for its row (one evaluation or one of its parts)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..engines.sandbox import EngineFailed
from ..errors import StoreUnavailable, Unencodable

if TYPE_CHECKING:
    from ..models import Evaluation


def failure_words(evaluation: Evaluation, exc: Exception) -> str:
    """Why an evaluation failed, for its row. In words already: the store (evaluate again once
    it answers), a tokenizer that cannot spell the corpus (for good), the library's child (it
    died or overran; this process lives). The corpus file gone or unreadable is said so, with
    no traceback."""
    if isinstance(exc, (StoreUnavailable, Unencodable, EngineFailed)):
        return str(exc)
    if isinstance(exc, OSError):
        return (f"the corpus file of {evaluation.corpus.name!r} cannot be read "
                f"({exc.strerror or exc}); run manage.py verify")
    return f"{type(exc).__name__}: {exc}"
