"""Training parameters, checked once, here, for every caller: the core's trainer, the registry's
runs (which add only their ``MAX_VOCAB_SIZE``) and its forms, API and commands.

A bad value raises ``Invalid`` (a ``ValueError``) whose ``field`` is the name of the parameter in
the API and the forms (``algorithm``, ``vocab_size``, ``special_tokens``, ``pattern``,
``min_frequency``, ``sweep``, and for character-level BPE ``lowercase``, ``split`` and
``min_word_frequency``), so an interface shows the message beside the input it is about. A
parameter given (not None) that does not apply to the algorithm is refused, never ignored.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from ..errors import Invalid
from .checks import is_int
from .pretokenize import PreTokenizer
from .char_tokenizer import SPLITS as SPLIT_REGEXES
from .char_tokenizer import UNK
from .special_tokens import check_special_tokens

ALGORITHMS = ("byte_bpe", "char_bpe")
SPLITS = tuple(SPLIT_REGEXES)  # character-level BPE's word splits
BYTE_ONLY = ("pattern",)  # parameters of one algorithm only
CHAR_ONLY = ("lowercase", "split", "min_word_frequency")

MIN_FREQUENCY_BOUNDS = (1, 2**31 - 1)
"""The least and the greatest ``min_frequency``: a pair seen once may merge; the greatest is the
largest count a database integer column holds (a run's row keeps it), far above any pair's count
in a corpus the registry takes. Forms take their ``min``/``max`` from here."""


@dataclass(frozen=True)
class TrainingParameters:
    """Checked parameters, made only by ``check_training_parameters``: a trainer takes them
    whole and checks nothing again, and a run stores them whole (``as_json``). ``pattern`` is
    byte-level BPE's pre-tokenizing regex (a short name or the custom regex; "" for
    character-level BPE, which cuts words by ``split``), and ``sweep`` the distinct smaller
    vocab sizes in order."""

    vocab_size: int
    special_tokens: list[str] = field(default_factory=list)
    pattern: str = "gpt2"
    min_frequency: int = 1
    sweep: list[int] = field(default_factory=list)
    algorithm: str = "byte_bpe"
    lowercase: bool = False  # the three of character-level BPE (their defaults for byte_bpe)
    split: str = "whitespace"
    min_word_frequency: int = 1

    def as_json(self) -> dict:
        """Every field, as plain JSON: what a run stores (``from_json`` reads it back)."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> TrainingParameters:
        """The parameters ``as_json`` wrote (checked when they were made, so not again)."""
        return cls(**data)

    def public(self) -> dict:
        """The parameters as every interface shows them (a run's API answer, a version's
        lineage, "Run again with changes"): character-level BPE's three are None for byte-level
        BPE, which has no use for them."""
        char_level = self.algorithm == "char_bpe"
        return {"algorithm": self.algorithm, "vocab_size": self.vocab_size,
                "pattern": self.pattern, "special_tokens": list(self.special_tokens),
                "min_frequency": self.min_frequency, "sweep": list(self.sweep),
                "lowercase": self.lowercase if char_level else None,
                "split": self.split if char_level else None,
                "min_word_frequency": self.min_word_frequency if char_level else None}


def check_training_parameters(*, vocab_size, special_tokens=None, pattern=None, min_frequency=1,
                              sweep=(), max_vocab_size: int | None = None,
                              algorithm="byte_bpe", lowercase=None, split=None,
                              min_word_frequency=None,
                              max_sweep_sizes: int | None = None) -> TrainingParameters:
    """The parameters of a training, checked:
    ``check_training_parameters(vocab_size=300, special_tokens=["<s>"], sweep=[280])
    -> TrainingParameters(300, ["<s>"], "gpt2", 1, [280])``;
    ``check_training_parameters(algorithm="char_bpe", vocab_size=500, split="word_punct")`` has
    the special tokens ``["<unk>"]``. ``None`` is "not given": the algorithm's default. A
    parameter of the other algorithm given (``pattern`` with ``char_bpe``, ``lowercase`` with
    ``byte_bpe``) raises ``Invalid`` naming it. ``max_sweep_sizes``: the most sizes a sweep may
    list (None: no bound)."""
    algorithm = check_algorithm(algorithm)
    check_sweep_count(sweep, max_sweep_sizes)
    given = {"pattern": pattern, "lowercase": lowercase, "split": split,
             "min_word_frequency": min_word_frequency}
    other = CHAR_ONLY if algorithm == "byte_bpe" else BYTE_ONLY
    for name in other:
        if given[name] is not None:
            raise Invalid(f"{name} does not apply to {algorithm} (it is a parameter of "
                          f"{'char_bpe' if algorithm == 'byte_bpe' else 'byte_bpe'} only): "
                          f"leave it out", field=name)
    if algorithm == "char_bpe":
        return _check_char(vocab_size, special_tokens, min_frequency, sweep, max_vocab_size,
                           lowercase, split, min_word_frequency)
    special_tokens = check_special_tokens(special_tokens or ())
    vocab_size = check_vocab_size(vocab_size, len(special_tokens), max_vocab_size)
    min_frequency = check_min_frequency(min_frequency)
    sweep = check_sweep(sweep, vocab_size, len(special_tokens))
    return TrainingParameters(vocab_size, special_tokens,
                              PreTokenizer("gpt2" if pattern is None else pattern).pattern,
                              min_frequency, sweep)


def _check_char(vocab_size, special_tokens, min_frequency, sweep, max_vocab_size, lowercase,
                split, min_word_frequency) -> TrainingParameters:
    special_tokens = check_special_tokens([UNK] if special_tokens is None else special_tokens)
    if UNK not in special_tokens:
        raise Invalid(f"character-level BPE needs the unknown token {UNK!r} among its special "
                      f"tokens (characters never seen in training encode to it); got "
                      f"{special_tokens!r}", field="special_tokens")
    vocab_size = check_vocab_size(vocab_size, len(special_tokens), max_vocab_size, base=0)
    lowercase = False if lowercase is None else lowercase
    if not isinstance(lowercase, bool):
        raise Invalid(f"lowercase must be true or false, got {lowercase!r}", field="lowercase")
    split = "whitespace" if split is None else split
    if split not in SPLITS:
        raise Invalid(f"split must be one of {', '.join(SPLITS)} (whitespace: runs of "
                      f"non-space characters; word_punct: runs of letters and digits, and runs "
                      f"of punctuation), got {split!r}", field="split")
    min_word_frequency = 1 if min_word_frequency is None else min_word_frequency
    if not is_int(min_word_frequency) or not \
            MIN_FREQUENCY_BOUNDS[0] <= min_word_frequency <= MIN_FREQUENCY_BOUNDS[1]:
        raise Invalid(f"min word frequency must be an integer from {MIN_FREQUENCY_BOUNDS[0]} to "
                      f"{MIN_FREQUENCY_BOUNDS[1]}, got {min_word_frequency!r}",
                      field="min_word_frequency")
    return TrainingParameters(vocab_size, special_tokens, "", check_min_frequency(min_frequency),
                              check_sweep(sweep, vocab_size, len(special_tokens), base=0),
                              "char_bpe", lowercase, split, min_word_frequency)


def check_algorithm(algorithm) -> str:
    """``check_algorithm("char_bpe") -> "char_bpe"``; anything not in ``ALGORITHMS`` raises."""
    if algorithm not in ALGORITHMS:
        raise Invalid(f"algorithm must be one of {', '.join(ALGORITHMS)}, got {algorithm!r}",
                      field="algorithm")
    return algorithm


def check_vocab_size(vocab_size, num_special: int, maximum: int | None = None,
                     base: int = 256) -> int:
    """A vocab size holds the 256 bytes (``base``; 0 for character-level BPE, whose alphabet is
    known once the corpus is counted and always kept) and the special tokens, and at most ``maximum`` ids (the registry's ``MAX_VOCAB_SIZE``): ``check_vocab_size(300, 1) ->
    300``; ``check_vocab_size(256, 1)`` raises ``Invalid``."""
    low = base + num_special
    if not is_int(vocab_size) or vocab_size < low or (maximum is not None and vocab_size > maximum):
        upto = f" to {maximum} (MAX_VOCAB_SIZE)" if maximum is not None else " or more"
        held = (f"256 bytes + {num_special} special token{'' if num_special == 1 else 's'}"
                if base else f"{num_special} special token{'' if num_special == 1 else 's'}; "
                             f"the alphabet seen in training is always kept")
        raise Invalid(f"vocab size {vocab_size!r} is out of bounds: it must be an integer from "
                      f"{low} ({held}){upto}", field="vocab_size")
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


def check_sweep_count(sizes, most: int | None) -> None:
    """Refuse (``Invalid``, field ``sweep``) a sweep listing more than ``most`` sizes, before any
    size is read: every size is a version of its own (its merge and vocab rows, and an
    evaluation on every evaluation corpus)."""
    if most is not None and len(sizes or ()) > most:
        raise Invalid(f"the sweep lists {len(sizes):,} vocab sizes; a run takes at most {most} "
                      f"(MAX_SWEEP_SIZES): each size is a version of its own, with its merge and "
                      f"vocab rows and an evaluation on every evaluation corpus", field="sweep")


def check_sweep(sizes, vocab_size: int, num_special: int, base: int = 256) -> list[int]:
    """The distinct smaller vocab sizes of a sweep, in order; each must hold the bytes (``base``)
    and the special tokens and be below ``vocab_size``: ``check_sweep([300, 280, 300], 400, 1)
    -> [280, 300]``."""
    low = base + num_special
    sizes = list(sizes or ())
    for size in sizes:
        if not is_int(size) or not low <= size < vocab_size:
            raise Invalid(f"sweep vocab size {size!r} must be an integer from {low} to "
                          f"{vocab_size - 1} (below the vocab size {vocab_size})", field="sweep")
    return sorted(set(sizes))
