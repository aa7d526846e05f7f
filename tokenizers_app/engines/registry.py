"""The registry of kinds: one object per kind of tokenizer, and everything the rest of the house
asks a kind. A version's ``algorithm`` names its kind; ``kind_named(version.algorithm)`` (or
``kind_of(tokenizer)``) answers the questions the code used to answer by comparing that string:

- what it is called (``label``, the choices' text) and what it is (``description``, for pages);
- the formats it reads (``reads``) and downloads as (``downloads``, ``files``);
- how a version of it is kept (``stored_in``: the core's merge and vocab rows, or the library's
  canonical file beside its rows), loaded (``from_rows`` / ``load_file``) and named (``digest``);
- how it is evaluated (``evaluate_totals``, ``metrics``, ``cut_rule``) and the notes beside its
  metrics (``notes``, from the loaded tokenizer's own fields);
- whether it trains (``trains``), how its tokens are shown (``describe``, ``word_end``) and
  whether it has a merge tree (``has_merge_tree``).

Adding a kind is one subclass of ``TokenizerKind`` and ``register(kind)``: the models' choices,
the pages' lists of kinds and formats, storing, loading and evaluating all read this table.
Plain Python: the engines import no Django (the models derive their choices from ``KINDS``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

from ..bpe import CharBPETokenizer
from ..bpe import Tokenizer as CoreTokenizer
from ..bpe import evaluation as core_evaluation
from ..bpe.canonical import content_digest, vocab_kinds
from ..bpe.eval_totals import BLANK_LINES, EvalTotals
from ..bpe.formats import BYTE_FORMATS, CHAR_FORMATS, dumps_tokenizer
from ..bpe.pattern_check import check_pattern
from ..bpe.training import has_standard_layout
from . import kinds as descriptions
from .evaluation import library_totals
from .files import HF_FILE, transformers_config
from .hf import HFEngine
from .spm import SentencePieceEngine, normalization_rule

ROWS, FILE = "rows", "file"  # where a version's contents are kept (``stored_in``)


class TokenizerKind:
    """A kind of tokenizer. The defaults fit any tokenizer that meets ``protocol.Engine``
    (bytes tokens, document evaluation); each kind overrides what it does otherwise."""

    name: str = ""  # the value stored in ``algorithm``: byte_bpe, char_bpe, hf, sentencepiece
    label: str = ""  # the choices' text: "byte-level BPE"
    description: str = ""  # one sentence for pages and forms
    stored_in: str = ROWS
    reads: tuple[str, ...] = ()  # the import formats whose files may hold one
    downloads: tuple[str, ...] = ()  # the formats a version of it downloads as
    trains: bool = False  # whether a run of ours trains one (``bpe``)
    has_merge_tree: bool = True  # whether a token page draws the merges that made it
    has_standard_layout: bool = False  # ids may be special tokens, 256 bytes, then merges
    has_alphabet: bool = False  # its base symbols are an alphabet of characters (vocab rows
    # of kind ``symbol``), laid out before the merges when trained
    pattern_name: str = "pattern"  # what its ``pattern`` is, as pages name it
    library_name: str = ""  # the library that encodes it, as pages name it

    # storing and loading
    def digest(self, tokenizer) -> str:
        """The content's name: two versions with one digest are the same version."""
        return content_digest(tokenizer)

    def merge_rows(self, tokenizer) -> list[tuple[bytes, bytes]]:
        """The merges as stored in rows: both sides as bytes."""
        return list(tokenizer.merges)

    def vocab_rows(self, tokenizer) -> Iterable[tuple[int, bytes, str]]:
        """``(id, token bytes, row kind)`` per vocab entry, by id."""
        return vocab_kinds(tokenizer)

    def standard_layout(self, tokenizer) -> bool:
        """Whether the version's vocab may be derived from its merges instead of read."""
        return self.has_standard_layout and has_standard_layout(tokenizer)

    def from_rows(self, vocab: dict[int, bytes], merges: list[tuple[bytes, bytes]],
                  counts: list[int] | None, special_ids: dict[str, int], pattern: str,
                  options: dict):
        """The tokenizer its rows make (kinds ``stored_in`` rows)."""
        raise NotImplementedError(f"{self.name} versions are not kept as rows")

    def load_file(self, data: bytes):
        """The tokenizer of its canonical file (kinds ``stored_in`` a file)."""
        raise NotImplementedError(f"{self.name} versions are not kept as a file")

    def check_import(self, tokenizer) -> None:
        """Refuse (``Invalid``) what an imported one of this kind must not bring."""

    # downloads
    def files(self, tokenizer, format: str, name: str) -> dict[str, bytes]:
        """The files of a version in ``format`` (one of ``downloads``)."""
        return dumps_tokenizer(tokenizer, format, name)

    # evaluation
    def evaluate_totals(self, tokenizer, blocks: Iterable[str]) -> EvalTotals:
        """The mergeable totals of ``tokenizer`` over ``"".join(blocks)``."""
        return library_totals(tokenizer, blocks)

    def metrics(self, tokenizer, totals: EvalTotals) -> dict:
        """The metrics of its (merged) totals."""
        return totals.metrics(tokenizer, has_unknown=tokenizer.unk_id is not None,
                              byte_fallback=bool(getattr(tokenizer, "byte_ids", ())))

    def cut_rule(self, tokenizer) -> str:
        """Where a corpus may be cut into parts for it (``eval_totals.cut_allowed``)."""
        return BLANK_LINES

    def notes(self, tokenizer) -> list[str]:
        """What its metrics mean for this kind, beside the numbers."""
        return []

    # showing
    def describe(self, tokenizer) -> descriptions.KindDescription:
        """What its vocabulary holds and its tokens are built from, for its pages."""
        return descriptions.library(tokenizer, self.library_name or self.label)

    def word_end(self, tokenizer) -> str:
        """The mark that ends a word's last token ("" when its tokens carry none)."""
        return ""

    def __repr__(self) -> str:
        return f"<kind {self.name}>"


class CoreKind(TokenizerKind):
    """A kind our core trains, stores as rows and evaluates (``bpe``)."""

    trains = True

    def evaluate_totals(self, tokenizer, blocks: Iterable[str]) -> EvalTotals:
        return core_evaluation.evaluate_totals(tokenizer, blocks)

    def metrics(self, tokenizer, totals: EvalTotals) -> dict:
        return totals.metrics(tokenizer)

    def cut_rule(self, tokenizer) -> str:
        return core_evaluation.cut_rule(tokenizer)


class ByteBPE(CoreKind):
    name, label = "byte_bpe", "byte-level BPE"
    description = "Byte-level BPE (GPT-2, tiktoken): any text, no unknown token"
    reads = downloads = BYTE_FORMATS
    has_standard_layout = True

    def check_import(self, tokenizer) -> None:
        """Its pattern is a regex: one that backtracks without end is refused."""
        check_pattern(tokenizer.pattern)

    def from_rows(self, vocab, merges, counts, special_ids, pattern, options):
        return CoreTokenizer(vocab, merges, special_ids, pattern, merge_counts=counts)

    def notes(self, tokenizer) -> list[str]:
        return ["Byte-fallback rate: multi-byte characters that a token boundary cuts through. "
                "No unknown rate: every byte has a token."]

    def describe(self, tokenizer) -> descriptions.KindDescription:
        return descriptions.byte_level(tokenizer)


class CharBPE(CoreKind):
    name, label = "char_bpe", "character-level BPE"
    description = ("Character-level BPE (subword-nmt): characters + '</w>', unseen "
                   "characters become <unk>")
    reads = downloads = CHAR_FORMATS
    has_alphabet = True
    pattern_name = "words"  # its pattern is the word split (whitespace, word_punct)

    def merge_rows(self, tokenizer) -> list[tuple[bytes, bytes]]:
        """Its merges are text: kept as their UTF-8."""
        return [(left.encode(), right.encode()) for left, right in tokenizer.merges]

    def from_rows(self, vocab, merges, counts, special_ids, pattern, options):
        """Its rows hold the symbols' UTF-8; its options the unknown token, the suffix and
        whether it lowercases."""
        tokenizer = CharBPETokenizer(
            {i: bytes(token).decode() for i, token in vocab.items()},
            [(bytes(left).decode(), bytes(right).decode()) for left, right in merges],
            list(special_ids), options["unk_token"], options["end_of_word_suffix"],
            options["lowercase"], pattern, counts)
        if tokenizer.special_ids != special_ids:
            raise ValueError(f"special token ids {special_ids} do not match the vocab")
        return tokenizer

    def notes(self, tokenizer) -> list[str]:
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


class FileKind(TokenizerKind):
    """A kind another library encodes: its canonical file kept, its vocab and merges in rows
    for the pages, loaded in a child process (``sandbox``)."""

    stored_in = FILE
    engine: type = HFEngine

    def digest(self, tokenizer) -> str:
        """sha256 over the kind and the canonical file: the same content is the same version."""
        return hashlib.sha256(self.name.encode() + b"\0" + tokenizer.canonical).hexdigest()

    def vocab_rows(self, tokenizer):
        """``(id, piece bytes, kind, score)``: the library's own kinds and scores."""
        return tokenizer.vocab_kinds()

    def load_file(self, data: bytes):
        return self.engine(data)

    def files(self, tokenizer, format: str, name: str) -> dict[str, bytes]:
        if format not in self.downloads:
            raise ValueError(f"a {self.name} version downloads as {' or '.join(self.downloads)}, "
                             f"not {format}: {format} files cannot express it")
        return self.canonical_files(tokenizer, format, name)

    def canonical_files(self, tokenizer, format: str, name: str) -> dict[str, bytes]:
        raise NotImplementedError

    def has_merges(self, tokenizer) -> bool:
        return bool(tokenizer.merges)


class HuggingFace(FileKind):
    name, label = "hf", "Hugging Face tokenizer.json"
    description = "any tokenizer.json that Hugging Face tokenizers loads"
    reads = ("hf", "transformers")
    downloads = ("hf", "transformers")
    has_merge_tree = False
    library_name = "Hugging Face"
    engine = HFEngine

    def canonical_files(self, tokenizer, format: str, name: str) -> dict[str, bytes]:
        """Its ``tokenizer.json`` as the library wrote it, or a ``transformers`` folder."""
        if format == "hf":
            return {HF_FILE: tokenizer.canonical}
        return {HF_FILE: tokenizer.canonical, **transformers_config(tokenizer)}

    def notes(self, tokenizer) -> list[str]:
        """From its file's model type and normalizer."""
        try:
            doc = json.loads(tokenizer.canonical)
        except ValueError:
            doc = {}
        model = (doc.get("model") or {}).get("type") or getattr(tokenizer, "model_type", "")
        notes = list(LIBRARY_NOTES)
        if model == "WordPiece":
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


def _normalizer_types(normalizer: dict) -> set[str]:
    """The types of a normalizer and of those a ``Sequence`` holds."""
    inner = normalizer.get("normalizers") or []
    return {normalizer.get("type", "")} | {part.get("type", "") for part in inner
                                          if isinstance(part, dict)}


class SentencePiece(FileKind):
    name, label = "sentencepiece", "SentencePiece model"
    description = "a .model that the sentencepiece library loads"
    reads = downloads = ("sentencepiece",)
    has_merge_tree = False
    library_name = "SentencePiece"
    engine = SentencePieceEngine

    def canonical_files(self, tokenizer, format: str, name: str) -> dict[str, bytes]:
        return {f"{name}.model": tokenizer.canonical}

    def notes(self, tokenizer) -> list[str]:
        """From its model's normalization rule (``identity``: none)."""
        rule = normalization_rule(tokenizer.canonical)
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


def stored_in_file(name: str) -> bool:
    """Whether versions of the kind ``name`` keep a canonical file (an engine's kind)."""
    return name in KINDS and KINDS[name].stored_in == FILE


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


def evaluate_totals(tokenizer, blocks: Iterable[str]) -> EvalTotals:
    """The mergeable totals of ``tokenizer`` over ``"".join(blocks)``, streamed, by its kind."""
    return kind_of(tokenizer).evaluate_totals(tokenizer, blocks)


def metrics_of_totals(tokenizer, totals: EvalTotals) -> dict:
    """The metrics of any kind from its (merged) totals."""
    return kind_of(tokenizer).metrics(tokenizer, totals)


def cut_rule(tokenizer) -> str:
    """Where a corpus may be cut into parts for this tokenizer (``eval_totals.cut_allowed``)."""
    return kind_of(tokenizer).cut_rule(tokenizer)


def evaluate(tokenizer, blocks: Iterable[str]) -> dict:
    """All metrics of ``tokenizer`` over the text ``"".join(blocks)``."""
    return metrics_of_totals(tokenizer, evaluate_totals(tokenizer, blocks))


def describe(tokenizer) -> descriptions.KindDescription:
    """The description of a loaded tokenizer, by its kind (kept on it: a loaded tokenizer
    never changes)."""
    found = getattr(tokenizer, "_kind_description", None)
    if found is None:
        found = kind_of(tokenizer).describe(tokenizer)
        tokenizer._kind_description = found
    return found


def kind_notes(tokenizer) -> list[str]:
    """What the metrics of ``tokenizer`` mean for its kind."""
    return kind_of(tokenizer).notes(tokenizer)


def engine_files(engine, format: str, name: str = "tokenizer") -> dict[str, bytes]:
    """The files of a version in ``format``, by its kind: ``engine_files(hf, "transformers")``
    is the ``tokenizer.json`` with its ``transformers`` config; a format its kind does not
    download as is a ``ValueError`` naming those that work."""
    return kind_of(engine).files(engine, format, name)


def download_formats(name: str) -> tuple[str, ...]:
    """The formats a version of the kind ``name`` downloads as."""
    return kind_named(name).downloads


def library_formats() -> tuple[str, ...]:
    """The formats only a kind kept as a file reads (none of the core's kinds does):
    ``("sentencepiece",)``."""
    core = {f for kind in KINDS.values() if kind.stored_in == ROWS for f in kind.reads}
    return tuple(f for f in read_formats() if f not in core)


def read_formats() -> tuple[str, ...]:
    """Every format some kind reads, each once, in the registry's order."""
    return tuple(dict.fromkeys(format for kind in KINDS.values() for format in kind.reads))
