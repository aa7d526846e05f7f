"""Tokenizers of every kind the registry imports, trained here from real text with the field's
own trainers (Hugging Face ``tokenizers`` and ``sentencepiece``): nothing is downloaded.

Each function returns the file bytes a user would import: a ``tokenizer.json`` or a SentencePiece
``.model``. Training takes seconds, so each file is kept: per process, and in a folder of the
machine's temporary directory named by what makes it (this file's source, the arguments and the
libraries' versions), which the xdist workers share."""

from __future__ import annotations

import fcntl
import functools
import hashlib
import io
import json
import os
import tempfile
from importlib.metadata import version
from pathlib import Path

from tests.bpe.corpora import SAMPLES, varied_text

# English prose, code and a little CJK: CJK stays rare, so small vocabularies fall back on it
# (without varied_text's run of 100,000 "a": one word that long takes the trainers seconds)
TRAINING_TEXT = (SAMPLES["english"] * 4
                 + varied_text(120_000, seed=11).replace("a" * 100_000, "")
                 + "def f(x):\n    return x + 1\n\n" * 30 + "東京は日本の首都です。\n")
TRAINING_LINES = [line for line in TRAINING_TEXT.splitlines() if line.strip()]
BYTE_PIECES = [f"<0x{byte:02X}>" for byte in range(256)]
STORE = Path(tempfile.gettempdir()) / "registry-test-trained"


def stored(make):
    """``make(*args)``, kept per process and in ``STORE`` (made by one process at a time, written
    whole, then renamed)."""
    @functools.cache
    @functools.wraps(make)
    def made(*args):
        key = hashlib.sha256(repr((Path(__file__).read_bytes(), make.__name__, args,
                                   version("tokenizers"), version("sentencepiece"))).encode())
        path = STORE / key.hexdigest()
        STORE.mkdir(exist_ok=True)
        with open(path.with_suffix(".lock"), "wb") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one process trains; the others wait, then read
            if path.is_file():
                return path.read_bytes()
            data = make(*args)
            partial = path.with_suffix(f".{os.getpid()}.part")
            partial.write_bytes(data)
            os.replace(partial, path)
            return data

    return made


@stored
def llama_bpe_json(vocab_size: int = 800) -> bytes:
    """A Llama-2-style BPE: ``▁`` for spaces (Metaspace), byte fallback to ``<0xNN>`` pieces,
    ``<unk>``, ``<s>``, ``</s>``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE(byte_fallback=True, unk_token="<unk>", fuse_unk=True))
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
    tokenizer.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(),
                                           decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    specials = ["<unk>", "<s>", "</s>"]
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials + BYTE_PIECES,
                                  limit_alphabet=150, show_progress=False)
    tokenizer.train_from_iterator(TRAINING_LINES, trainer)
    doc = json.loads(tokenizer.to_str())  # the byte pieces are ordinary vocab, not added tokens
    doc["added_tokens"] = [t for t in doc["added_tokens"] if t["content"] in specials]
    return json.dumps(doc, ensure_ascii=False, indent=2).encode()


@stored
def bert_wordpiece_json(vocab_size: int = 700) -> bytes:
    """A BERT-style WordPiece: lowercasing and accent-stripping normalizer, ``##`` continuations,
    ``[UNK]`` for what it cannot spell, and the ``[CLS] ... [SEP]`` template."""
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors
    from tokenizers import trainers

    tokenizer = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.decoder = decoders.WordPiece()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, special_tokens=specials,
                                        limit_alphabet=120, show_progress=False)
    tokenizer.train_from_iterator(TRAINING_LINES, trainer)
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    return tokenizer.to_str(pretty=True).encode()


@stored
def unigram_json(vocab_size: int = 600) -> bytes:
    """A T5 / XLM-R-style Unigram with Metaspace and ``<unk>``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.Unigram())
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tokenizer.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    trainer = trainers.UnigramTrainer(vocab_size=vocab_size, special_tokens=["<pad>", "</s>",
                                      "<unk>"], unk_token="<unk>", show_progress=False)
    tokenizer.train_from_iterator(TRAINING_LINES, trainer)
    return tokenizer.to_str(pretty=True).encode()


@stored
def sentencepiece_model(model_type: str = "bpe", vocab_size: int = 600) -> bytes:
    """A SentencePiece ``.model`` (``bpe`` with byte fallback, or ``unigram``), as the
    ``sentencepiece`` trainer writes it; the identity normalization keeps whitespace runs."""
    import sentencepiece

    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(TRAINING_LINES), model_writer=model, vocab_size=vocab_size,
        model_type=model_type, byte_fallback=model_type == "bpe", character_coverage=0.9995,
        normalization_rule_name="nmt_nfkc" if model_type == "unigram" else "identity",
        num_threads=1, minloglevel=2)
    return model.getvalue()


def unigram_without_unk_json() -> bytes:
    """The Unigram above with no unknown token (``unk_id`` null), as some files have it: the
    library refuses a character no piece spells."""
    doc = json.loads(unigram_json())
    doc["model"]["unk_id"] = None
    return json.dumps(doc).encode()
