"""The BPE core: plain Python and ``regex``; it never imports Django.

    from tokenizers_app.bpe import train_bpe, Tokenizer, load_tokenizer, save_tokenizer

Parameters are checked once, by ``check_training_parameters``; ``train`` takes the checked
``TrainingParameters`` whole (``train_bpe`` and ``train_char_bpe`` check, then train).
"""

from .baselines import ByteTokenizer, CharTokenizer, WordTokenizer
from .char_bpe import CharBPETokenizer, train_char_bpe
from .evaluation import evaluate
from .formats import (
    FORMATS,
    dumps_tokenizer,
    load_tokenizer,
    loads_tokenizer,
    save_tokenizer,
)
from .parameters import TrainingParameters, check_training_parameters
from .pretokenize import NAMED_PATTERNS
from .tokenizer import Tokenizer
from .trainers import train
from .training import TrainingCancelled, TrainResult, train_bpe

__all__ = [
    "ByteTokenizer",
    "CharBPETokenizer",
    "CharTokenizer",
    "FORMATS",
    "WordTokenizer",
    "dumps_tokenizer",
    "evaluate",
    "loads_tokenizer",
    "train_char_bpe",
    "NAMED_PATTERNS",
    "Tokenizer",
    "TrainResult",
    "TrainingParameters",
    "TrainingCancelled",
    "load_tokenizer",
    "check_training_parameters",
    "save_tokenizer",
    "train",
    "train_bpe",
]
