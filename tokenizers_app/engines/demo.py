"""A BERT-style WordPiece ``tokenizer.json`` trained with Hugging Face ``tokenizers`` on a text,
for the demo: the registry then holds a tokenizer of another kind beside the ones it trains,
built on this machine (nothing is downloaded)."""

from __future__ import annotations

from collections.abc import Iterable

SPECIAL_TOKENS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


def train_wordpiece(lines: Iterable[str], vocab_size: int = 2048) -> bytes:
    """``tokenizer.json`` bytes of a lowercasing WordPiece (BERT's normalizer and pre-tokenizer,
    ``##`` continuations, ``[UNK]``, the ``[CLS] $A [SEP]`` template) trained on ``lines``."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from tokenizers import trainers

    tokenizer = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.decoder = decoders.WordPiece()
    trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=SPECIAL_TOKENS,
                                        show_progress=False)
    tokenizer.train_from_iterator(lines, trainer)
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", cls), ("[SEP]", sep)])
    return tokenizer.to_str(pretty=True).encode()
