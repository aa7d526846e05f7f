"""The registry of kinds: one object per kind of tokenizer, and everything the rest of the house
asks a kind. A version's ``algorithm`` names its kind; ``kind_named(version.algorithm)`` (or
``kind_of(tokenizer)``) answers the questions the code used to answer by comparing that string:

- what it is called (``label``, the choices' text) and what it is (``description``, for pages);
- the formats it reads (``reads``) and downloads as (``downloads``, ``files``);
- how a version of it is kept (``stored_in``: the core's merge and vocab rows, or the library's
  canonical file beside its rows), loaded (``from_rows`` / ``load_file``) and named (``digest``);
- how it is evaluated (``evaluate_totals``, ``metrics``, ``cut_rule``) and the notes beside its
  metrics (``notes``, from its canonical file's fields: model type, normalizer);
- whether it trains (``trains``) and how it counts, trains and extends (``train``,
  ``train_counted``, ``count_range``, ``extend``, ``extend_counted``, ``extendable``,
  ``sweeps``: ``training``, ``kind``), how its tokens are shown (``describe``, ``word_end``) and
  whether it has a merge tree (``has_merge_tree``).

Adding a kind is one subclass of ``TokenizerKind`` and ``register(kind)``: the models' choices,
the pages' lists of kinds and formats, storing, loading and evaluating all read this table.
Plain Python: the engines import no Django (the models derive their choices from ``KINDS``).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import replace

from ..bpe import CharBPETokenizer
from ..bpe import Tokenizer as CoreTokenizer
from ..bpe.eval_totals import EvalTotals
from ..bpe.formats import BYTE_FORMATS, CHAR_FORMATS
from ..bpe.pattern_check import check_pattern
from . import kinds as descriptions
from .files import HF_FILE, transformers_config
from .hf import HFEngine
from .extended_files import extended_json, extended_model
from .kind import FILE, ROWS, CoreKind, FileKind, TokenizerKind
from .spm import SentencePieceEngine, model_type, normalization_rule
from .training import ByteTraining, CharTraining


class ByteBPE(ByteTraining):
    name, label = "byte_bpe", "byte-level BPE"
    description = "Byte-level BPE (GPT-2, tiktoken): any text, no unknown token"
    reads = downloads = BYTE_FORMATS
    may_have_standard_layout = True

    def check_import(self, tokenizer) -> None:
        """Its pattern is a regex: one that backtracks without end is refused."""
        check_pattern(tokenizer.pattern)

    def from_rows(self, vocab, merges, counts, special_ids, pattern, options):
        return CoreTokenizer(vocab, merges, special_ids, pattern, merge_counts=counts)

    def notes(self, canonical: bytes) -> list[str]:
        return ["Byte-fallback rate: multi-byte characters that a token boundary cuts through. "
                "No unknown rate: every byte has a token."]

    def describe(self, tokenizer) -> descriptions.KindDescription:
        return descriptions.byte_level(tokenizer)


class CharBPE(CharTraining):
    name, label = "char_bpe", "character-level BPE"
    description = ("Character-level BPE (subword-nmt): characters + '</w>', unseen "
                   "characters become <unk>")
    reads = downloads = CHAR_FORMATS
    has_alphabet = True
    pattern_name = "words"  # its pattern is the word split (whitespace, word_punct)

    def from_rows(self, vocab, merges, counts, special_ids, pattern, options):
        """Its options hold the unknown token, the suffix and whether it lowercases."""
        tokenizer = CharBPETokenizer(
            vocab, merges, list(special_ids), options["unk_token"],
            options["end_of_word_suffix"], options["lowercase"], pattern, counts)
        if tokenizer.special_ids != special_ids:
            raise ValueError(f"special token ids {special_ids} do not match the vocab")
        return tokenizer

    def notes(self, canonical: bytes) -> list[str]:
        return ["Unknown rate: characters that encode to <unk> (outside the alphabet seen in "
                "training). Lossless rate: whitespace runs decode as one space."]

    def describe(self, tokenizer) -> descriptions.KindDescription:
        return descriptions.char_level(tokenizer)

    def word_end(self, tokenizer) -> str:
        return tokenizer.suffix


LIBRARY_NOTES = ["Word coverage counts whitespace-separated words encoded as one token.",
                 "Byte-fallback rate (where it has <0xNN> pieces): characters written as byte "
                 "pieces instead of a token of their own."]
UNKNOWN_NOTE = "Unknown rate (where it has an unknown token): characters inside <unk>."


def _lossless_note(rewrite: str) -> str:
    return (f"Lossless rate below 100 % is expected: its normalizer {rewrite} before "
            f"encoding, and decoding gives the rewritten text.")


class HuggingFace(FileKind):
    name, label = "hf", "Hugging Face tokenizer.json"
    description = "any tokenizer.json that Hugging Face tokenizers loads"
    reads = ("hf", "transformers")
    downloads = ("hf", "transformers")
    library_name = "Hugging Face"
    engine = HFEngine
    file_name = HF_FILE

    def extended_file(self, data: bytes, additions: list) -> bytes:
        return extended_json(data, additions)  # a tokenizer.json's model and vocab

    def model_type(self, canonical: bytes) -> str:
        return (_hf_doc(canonical).get("model") or {}).get("type") or ""

    def canonical_files(self, tokenizer, format: str, name: str) -> dict[str, bytes]:
        """Its ``tokenizer.json`` as the library wrote it, or a ``transformers`` folder."""
        if format == "hf":
            return {HF_FILE: tokenizer.canonical}
        return {HF_FILE: tokenizer.canonical, **transformers_config(tokenizer)}

    def notes(self, canonical: bytes) -> list[str]:
        """From its file's model type and normalizer."""
        doc = _hf_doc(canonical)
        notes = list(LIBRARY_NOTES)
        if self.model_type(canonical) == "WordPiece":
            notes.append("Unknown rate: a word WordPiece cannot spell is one [UNK], so all its "
                         "characters count as unknown.")
        else:
            notes.append(UNKNOWN_NOTE)
        normalizer = doc.get("normalizer")
        if normalizer:
            rewrite = ("lowercases and strips accents" if _normalizer_types(normalizer)
                       & {"BertNormalizer"} else
                       "rewrites the text (Unicode normalization, whitespace)")
            notes.append(_lossless_note(rewrite))
        return notes


def _hf_doc(canonical: bytes) -> dict:
    try:
        doc = json.loads(canonical)
    except ValueError:
        return {}
    return doc if isinstance(doc, dict) else {}


def _normalizer_types(normalizer: dict) -> set[str]:
    """The types of a normalizer and of those a ``Sequence`` holds."""
    inner = normalizer.get("normalizers") or []
    return {normalizer.get("type", "")} | {part.get("type", "") for part in inner
                                          if isinstance(part, dict)}


class SentencePiece(FileKind):
    name, label = "sentencepiece", "SentencePiece model"
    description = "a .model that the sentencepiece library loads"
    reads = downloads = ("sentencepiece",)
    library_name = "SentencePiece"
    engine = SentencePieceEngine
    file_name = "tokenizer.model"

    def extended_file(self, data: bytes, additions: list) -> bytes:
        return extended_model(data, additions)  # through the library's protobuf

    def model_type(self, canonical: bytes) -> str:
        return model_type(canonical)

    def canonical_files(self, tokenizer, format: str, name: str) -> dict[str, bytes]:
        return {f"{name}.model": tokenizer.canonical}

    def notes(self, canonical: bytes) -> list[str]:
        """From its model's normalization rule (``identity``: none)."""
        rule = normalization_rule(canonical)
        notes = [*LIBRARY_NOTES, UNKNOWN_NOTE]
        if rule.startswith("nmt"):
            notes.append(_lossless_note("rewrites the text (Unicode normalization, whitespace)"))
        return notes


KINDS: dict[str, TokenizerKind] = {}
DEFAULT_KIND = "byte_bpe"  # what a run trains when no kind is asked for


def register(kind: TokenizerKind) -> TokenizerKind:
    """Add ``kind`` to the registry (replacing one of the same name); returns it."""
    KINDS[kind.name] = kind
    return kind


for _kind in (ByteBPE(), CharBPE(), HuggingFace(), SentencePiece()):
    register(_kind)


def kind_named(name: str) -> TokenizerKind:
    """The kind stored as ``name``; an unknown name raises ``ValueError`` naming the kinds."""
    try:
        return KINDS[name]
    except KeyError:
        raise ValueError(f"no kind {name!r}; kinds: {', '.join(KINDS)}") from None


def kind_of(tokenizer) -> TokenizerKind:
    """The kind of a loaded tokenizer (its ``algorithm``)."""
    return kind_named(tokenizer.algorithm)


def kind_choices(*, trains: bool | None = None) -> list[tuple[str, str]]:
    """``(name, label)`` of every kind (``trains``: only those that do, or do not, train), in
    the order they were registered: the models' choices."""
    return [(kind.name, kind.label) for kind in KINDS.values()
            if trains is None or kind.trains == trains]


def trained_kind_choices() -> list[tuple[str, str]]:
    """``(name, label)`` of the kinds a run trains: a run's choices."""
    return kind_choices(trains=True)


def load_engine(kind: str, data: bytes):
    """The tokenizer of ``kind`` from its canonical file: ``load_engine("hf", tokenizer_json)``."""
    found = KINDS.get(kind)
    if found is None or found.stored_in != FILE:
        engines = [k.name for k in KINDS.values() if k.stored_in == FILE]
        raise ValueError(f"no engine for kind {kind!r}; engines: {', '.join(engines)}")
    return found.load_file(data)


def engine_digest(engine) -> str:
    """The digest of a tokenizer kept as a file (``FileKind.digest``)."""
    return kind_of(engine).digest(engine)


BASELINES = CoreKind()  # the compare page's baselines (``bpe.baselines``: one token per byte,
# character or word) are no kind of version: the core evaluates them


def _evaluated_as(tokenizer) -> TokenizerKind:
    return KINDS.get(tokenizer.algorithm) or BASELINES


def evaluate_totals(tokenizer, blocks: Iterable[str], words: Counter | None = None) -> EvalTotals:
    """The mergeable totals of ``tokenizer`` over ``"".join(blocks)``, streamed, by its kind;
    ``words``, when given, gets the text's whitespace-separated words added on the way
    (``TokenizerKind.evaluate_totals``)."""
    return _evaluated_as(tokenizer).evaluate_totals(tokenizer, blocks, words)


def metrics_of_totals(tokenizer, totals: EvalTotals) -> dict:
    """The metrics of any kind from its (merged) totals."""
    return _evaluated_as(tokenizer).metrics(tokenizer, totals)


def counts_words(tokenizer) -> bool:
    """Whether its evaluation totals hold the whitespace-separated words with their counts."""
    return _evaluated_as(tokenizer).words_are_whitespace_words


def cut_rule(tokenizer) -> str:
    """Where a corpus may be cut into parts for this tokenizer (``eval_totals.cut_allowed``)."""
    return _evaluated_as(tokenizer).cut_rule(tokenizer)


def evaluate(tokenizer, blocks: Iterable[str]) -> dict:
    """All metrics of ``tokenizer`` over the text ``"".join(blocks)``."""
    return metrics_of_totals(tokenizer, evaluate_totals(tokenizer, blocks))


def describe(tokenizer) -> descriptions.KindDescription:
    """The description of a loaded tokenizer, by its kind (kept on it: a loaded tokenizer
    never changes)."""
    found = getattr(tokenizer, "_kind_description", None)
    if found is None:
        kind = kind_of(tokenizer)
        found = replace(kind.describe(tokenizer), has_merges=kind.has_merge_tree(tokenizer))
        tokenizer._kind_description = found
    return found


def engine_files(engine, format: str, name: str = "tokenizer") -> dict[str, bytes]:
    """The files of a version in ``format``, by its kind: ``engine_files(hf, "transformers")``
    is the ``tokenizer.json`` with its ``transformers`` config; a format its kind does not
    download as is a ``ValueError`` naming those that work."""
    return kind_of(engine).files(engine, format, name)


def library_formats() -> tuple[str, ...]:
    """The formats only a kind kept as a file reads (none of the core's kinds does):
    ``("sentencepiece",)``."""
    core = {f for kind in KINDS.values() if kind.stored_in == ROWS for f in kind.reads}
    return tuple(f for f in read_formats() if f not in core)


def read_formats() -> tuple[str, ...]:
    """Every format some kind reads, each once, in the registry's order."""
    return tuple(dict.fromkeys(format for kind in KINDS.values() for format in kind.reads))
