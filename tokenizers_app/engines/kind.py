"""What a kind of tokenizer is asked, as a class: ``TokenizerKind`` (its defaults fit any
tokenizer that meets ``protocol.Engine``), ``CoreKind`` (trained, stored as rows and evaluated by
our core) and ``FileKind`` (another library's, kept as its canonical file). The kinds themselves,
one object each, and their table: ``registry``."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable

from ..bpe import evaluation as core_evaluation
from ..bpe.canonical import content_digest, vocab_kinds
from ..bpe.eval_totals import BLANK_LINES, EvalTotals
from ..bpe.formats import dumps_tokenizer
from ..bpe.training import has_standard_layout
from . import kinds as descriptions
from .evaluation import library_totals

ROWS, FILE = "rows", "file"  # where a version's contents are kept (``stored_in``)


class TokenizerKind:
    """A kind of tokenizer. The defaults fit any tokenizer that meets ``protocol.Engine``
    (bytes tokens, document evaluation); each kind overrides what it does otherwise."""

    name: str = ""  # the value stored in ``algorithm`` (the registry lists them)
    label: str = ""  # the choices' text: "byte-level BPE"
    description: str = ""  # one sentence for pages and forms
    stored_in: str = ROWS
    reads: tuple[str, ...] = ()  # the import formats whose files may hold one
    downloads: tuple[str, ...] = ()  # the formats a version of it downloads as
    trains: bool = False  # whether a run of ours trains one (``bpe``)
    may_have_standard_layout: bool = False  # ids may be special tokens, 256 bytes, then merges
    has_alphabet: bool = False  # its base symbols are an alphabet of characters (vocab rows
    # of kind ``symbol``), laid out before the merges when trained
    pattern_name: str = "pattern"  # what its ``pattern`` is, as pages name it
    library_name: str = ""  # the library that encodes it, as pages name it
    # training and extension (a trained kind's methods: ``training.ByteTraining``, ...)
    fans_out: bool = False  # whether a large corpus's counting may be fanned out to count tasks
    has_regex: bool = False  # its ``pattern`` is a regex, tried on the corpora before a run
    default_special_tokens: tuple[str, ...] = ()  # a new run's special tokens, as forms offer
    parameter_fields: tuple[str, ...] = ()  # the run parameters of this kind only
    no_sweep_reason: str = ""  # why an extension run of it may not sweep ("": it may)

    @property
    def sweeps(self) -> bool:
        """Whether an extension run of a version of this kind may sweep smaller sizes."""
        return not self.no_sweep_reason

    def extendable(self, canonical: bytes) -> bool:
        """Whether an extension run can continue a version of it (``canonical``: its canonical
        file, for a kind kept as one; b"" for the others): a merge order to continue."""
        return self.trains

    def prefix(self, tokenizer, vocab_size: int):
        """The version a sweep keeps at ``vocab_size``, from a run's full tokenizer."""
        raise ValueError(f"a {self.label} run does not sweep")

    def extension_prefix(self, full, vocab_size: int, *, parent_vocab_size: int):
        """The version a sweep of an extension run keeps at ``vocab_size`` (kinds that
        ``sweeps``)."""
        raise ValueError(self.no_sweep_reason or f"a sweep of a {self.label} extension is "
                                                 f"not built")

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
        return self.may_have_standard_layout and has_standard_layout(tokenizer)

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
    # its totals' words are the text's whitespace-separated words, each with its count (a
    # library kind's word coverage is over them): the compare page's frequent words come
    # from them, with no pass of their own
    words_are_whitespace_words: bool = True

    def evaluate_totals(self, tokenizer, blocks: Iterable[str],
                        words: Counter | None = None) -> EvalTotals:
        """The mergeable totals of ``tokenizer`` over ``"".join(blocks)``; ``words``, when
        given, gets the text's whitespace-separated words with their counts added, from the
        same pass (a library kind's are its totals' words, on Unicode White_Space; the core's
        kinds count ``str.split``'s)."""
        return library_totals(tokenizer, blocks, words)

    def metrics(self, tokenizer, totals: EvalTotals) -> dict:
        """The metrics of its (merged) totals."""
        return totals.metrics(tokenizer, has_unknown=tokenizer.unk_id is not None,
                              byte_fallback=bool(getattr(tokenizer, "byte_ids", ())))

    def cut_rule(self, tokenizer) -> str:
        """Where a corpus may be cut into parts for it (``eval_totals.cut_allowed``)."""
        return BLANK_LINES

    def notes(self, canonical: bytes) -> list[str]:
        """What its metrics mean for this kind, beside the numbers; ``canonical``: a kind kept
        as a file reads its fields (model type, normalizer) there, the others get b""."""
        return []

    # showing
    def describe(self, tokenizer) -> descriptions.KindDescription:
        """What its vocabulary holds and its tokens are built from, for its pages."""
        return descriptions.library(tokenizer, self.library_name or self.label)

    def has_merge_tree(self, tokenizer) -> bool:
        """Whether its tokens are made by merges, so a token page draws the tree that made
        one (a WordPiece, Unigram or WordLevel model has none)."""
        return bool(tokenizer.merges)

    def word_end(self, tokenizer) -> str:
        """The mark that ends a word's last token ("" when its tokens carry none)."""
        return ""

    def __repr__(self) -> str:
        return f"<kind {self.name}>"


class CoreKind(TokenizerKind):
    """A kind our core trains, stores as rows and evaluates (``bpe``). How it counts, trains
    and extends (``training``), each taking the run's checked ``TrainingParameters`` whole:
    ``cut_pattern(params)`` (where a fanned-out count may cut the corpus), ``count_range``,
    ``train``, ``train_counted``, ``extend``, ``extend_counted``, ``prefix`` (a sweep's smaller
    version) and, when its extension runs sweep, ``extension_prefix``."""

    trains = True
    fans_out = True
    words_are_whitespace_words = False  # pre-tokens, or the core's own words

    def has_merge_tree(self, tokenizer) -> bool:
        return True  # its bytes or characters, merged

    def evaluate_totals(self, tokenizer, blocks: Iterable[str],
                        words: Counter | None = None) -> EvalTotals:
        return core_evaluation.evaluate_totals(tokenizer, blocks, words)

    def metrics(self, tokenizer, totals: EvalTotals) -> dict:
        return totals.metrics(tokenizer)

    def cut_rule(self, tokenizer) -> str:
        return core_evaluation.cut_rule(tokenizer)


class FileKind(TokenizerKind):
    """A kind another library encodes: its canonical file kept, its vocab and merges in rows
    for the pages, loaded in a child process (``sandbox``)."""

    stored_in = FILE
    engine: type  # the library's wrapper that loads its file (``hf.HFEngine``, ...)
    file_name: str = ""  # its canonical file's name in an import (``tokenizer.json``, ...)

    no_sweep_reason = "a sweep of a SentencePiece or tokenizer.json extension is not built"

    def extended_file(self, data: bytes, additions: list) -> bytes:
        """Its canonical file with the pieces an extension learned appended (the
        ``library_extension.Addition``s, in order), as its library writes it."""
        raise NotImplementedError

    def model_type(self, canonical: bytes) -> str:
        """The model type its canonical file names (``"BPE"``, ``"Unigram"``, ...)."""
        raise NotImplementedError

    def extendable(self, canonical: bytes) -> bool:
        """A BPE model, read from its file's model type (extended beside its library, in one
        worker: ``library_extension``)."""
        return self.model_type(canonical) == "BPE"

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
