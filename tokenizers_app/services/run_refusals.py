"""Every reason a run would be refused, at once: the run form shows them all together (the
workflow itself, ``runs.start_training_run``, stops at the first)."""

from __future__ import annotations

from django.conf import settings

from ..bpe.parameters import check_training_parameters
from ..errors import REFUSALS, RegistryError
from ..models import check_name
from .permissions import OPERATOR
from .versions import check_may_add_to

# a value of each parameter that passes its check, put in place of a refused one so the others
# are checked too (``training_run_refusals``); None is "not given": the algorithm's default
PASSING = {"special_tokens": None, "pattern": None, "min_frequency": 1, "sweep": (),
           "lowercase": None, "split": None, "min_word_frequency": None}


def training_run_refusals(*, tokenizer_name: str | None, created_by=OPERATOR,
                          **parameters) -> list[Exception]:
    """Every reason ``start_training_run`` refuses these, not only the first (a form shows them
    all at once): the tokenizer's name and who may add to it, then each parameter, a refused
    one being replaced by one that passes (``PASSING``) and the others checked again. A
    parameter left out (its field refused by the form) is not checked; ``tokenizer_name`` None
    neither: ``training_run_refusals(tokenizer_name="bad name", vocab_size=3,
    special_tokens=["<s>", "<s>"])`` gives the three refusals."""
    found: list[Exception] = []
    if tokenizer_name is not None:
        try:
            check_name("tokenizer", tokenizer_name)
            check_may_add_to(name=tokenizer_name, user=created_by)
        except RegistryError as refused:
            found.append(refused)
    passing = {**PASSING, "vocab_size": settings.MAX_VOCAB_SIZE}
    checked = {"vocab_size": passing["vocab_size"], **parameters}
    while True:
        try:
            check_training_parameters(**checked, max_vocab_size=settings.MAX_VOCAB_SIZE,
                                      max_sweep_sizes=settings.MAX_SWEEP_SIZES)
            return found
        except REFUSALS as refused:
            found.append(refused)
            field = getattr(refused, "field", None)
            if field not in passing or checked.get(field) == passing[field]:
                return found  # the algorithm, or a refusal no other value would lift
            checked[field] = passing[field]
