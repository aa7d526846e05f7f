"""Training parameters, checked once, here, for every caller: the core's trainer, the registry's
runs (which add only their ``MAX_VOCAB_SIZE``) and its forms, API and commands.

A bad value raises ``Invalid`` (a ``ValueError``) whose ``field`` is the name of the parameter in
the API and the forms (``vocab_size``, ``special_tokens``, ``pattern``, ``min_frequency``,
``sweep``), so an interface shows the message beside the input it is about.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import Invalid
from .checks import is_int
from .pretokenize import PreTokenizer
from .special_tokens import check_special_tokens

MIN_FREQUENCY_BOUNDS = (1, 2**31 - 1)
"""The least and the greatest ``min_frequency``: a pair seen once may merge; the greatest is the
largest count a database integer column holds (a run's row keeps it), far above any pair's count
in a corpus the registry takes. Forms take their ``min``/``max`` from here."""


@dataclass(frozen=True)
class TrainingParameters:
    """Checked parameters: ``pattern`` is the pattern's short name (or the custom regex), and
    ``sweep`` the distinct smaller vocab sizes in order."""

    vocab_size: int
    special_tokens: list[str] = field(default_factory=list)
    pattern: str = "gpt2"
    min_frequency: int = 1
    sweep: list[int] = field(default_factory=list)


def check_training_parameters(*, vocab_size, special_tokens=(), pattern="gpt2", min_frequency=1,
                              sweep=(), max_vocab_size: int | None = None) -> TrainingParameters:
    """The parameters of a byte-level BPE training, checked:
    ``check_training_parameters(vocab_size=300, special_tokens=["<s>"], sweep=[280])
    -> TrainingParameters(300, ["<s>"], "gpt2", 1, [280])``."""
    special_tokens = check_special_tokens(special_tokens)
    vocab_size = check_vocab_size(vocab_size, len(special_tokens), max_vocab_size)
    min_frequency = check_min_frequency(min_frequency)
    sweep = check_sweep(sweep, vocab_size, len(special_tokens))
    return TrainingParameters(vocab_size, special_tokens, PreTokenizer(pattern).pattern,
                              min_frequency, sweep)


def check_vocab_size(vocab_size, num_special: int, maximum: int | None = None) -> int:
    """A vocab size holds the 256 bytes and the special tokens, and at most ``maximum`` ids (the
    registry's ``MAX_VOCAB_SIZE``): ``check_vocab_size(300, 1) -> 300``;
    ``check_vocab_size(256, 1)`` raises ``Invalid``."""
    low = 256 + num_special
    if not is_int(vocab_size) or vocab_size < low or (maximum is not None and vocab_size > maximum):
        upto = f" to {maximum} (MAX_VOCAB_SIZE)" if maximum is not None else " or more"
        raise Invalid(f"vocab size {vocab_size!r} is out of bounds: it must be an integer from "
                      f"{low} (256 bytes + {num_special} special "
                      f"token{'' if num_special == 1 else 's'}){upto}",
                      field="vocab_size")
    return vocab_size


def check_min_frequency(min_frequency) -> int:
    """``check_min_frequency(2) -> 2``; 0, 2**31, ``True`` or ``"2"`` raise ``Invalid``."""
    low, high = MIN_FREQUENCY_BOUNDS
    if not is_int(min_frequency) or min_frequency < low:
        raise Invalid(f"min frequency must be an integer >= {low}, got {min_frequency!r}",
                      field="min_frequency")
    if min_frequency > high:
        raise Invalid(f"min frequency must be at most {high} (the largest count a run keeps), "
                      f"got {min_frequency!r}", field="min_frequency")
    return min_frequency


def check_sweep(sizes, vocab_size: int, num_special: int) -> list[int]:
    """The distinct smaller vocab sizes of a sweep, in order; each must hold the bytes and the
    special tokens and be below ``vocab_size``: ``check_sweep([300, 280, 300], 400, 1) ->
    [280, 300]``."""
    low = 256 + num_special
    sizes = list(sizes or ())
    for size in sizes:
        if not is_int(size) or not low <= size < vocab_size:
            raise Invalid(f"sweep vocab size {size!r} must be an integer from {low} to "
                          f"{vocab_size - 1} (below the vocab size {vocab_size})", field="sweep")
    return sorted(set(sizes))
