"""The BPE core: plain Python and ``regex``; it never imports Django.

    from tokenizers_app.bpe import train_bpe, Tokenizer, load_tokenizer, save_tokenizer
"""

from .formats import FORMATS, load_tokenizer, save_tokenizer
from .pretokenize import NAMED_PATTERNS
from .tokenizer import Tokenizer
from .training import TrainingCancelled, TrainResult, train_bpe

__all__ = [
    "FORMATS",
    "NAMED_PATTERNS",
    "Tokenizer",
    "TrainResult",
    "TrainingCancelled",
    "load_tokenizer",
    "save_tokenizer",
    "train_bpe",
]
