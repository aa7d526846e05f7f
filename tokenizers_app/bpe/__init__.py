"""The BPE core: plain Python and ``regex``; it never imports Django.

    from tokenizers_app.bpe import train_bpe, Tokenizer, load_tokenizer, save_tokenizer
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
from .pretokenize import NAMED_PATTERNS
from .tokenizer import Tokenizer
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
    "TrainingCancelled",
    "load_tokenizer",
    "save_tokenizer",
    "train_bpe",
]
