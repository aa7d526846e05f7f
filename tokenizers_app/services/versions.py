"""Versions: add one (numbered, with all its rows, or the existing one with the same digest),
import tokenizer files."""

from __future__ import annotations


from django.db import transaction
from django.db.models import Max

from ..bpe.formats import (
    FORMATS,
    GIVEN_PATTERN,
    PATTERNLESS_FORMATS,
    detect_format,
    loads_tokenizer,
)
from ..engines import FILE, KINDS, Engine, kind_of, read_formats
from ..engines.demo import train_wordpiece
from ..engines.sandbox import EngineFailed
from ..errors import Invalid
from ..models import Corpus, Tokenizer, TokenizerVersion, check_name
from ..models.engine_versions import check_json_files, read_engine_files_checked
from .evaluations import queue_evaluation
from .permissions import OPERATOR, check_may_add_version, recorded


def add_version(**version) -> TokenizerVersion:
    """``add_or_find_version``'s version, for a caller to which either will do."""
    return add_or_find_version(**version)[0]


def add_or_find_version(*, tokenizer: Tokenizer, core: Engine,
                        source: str, digest: str = "", source_detail: str = "",
                        training_run=None, created_by=None) -> tuple[TokenizerVersion, bool]:
    """``(version, created)``: the version of ``tokenizer`` holding ``core``, the existing one
    with the same digest (``created`` false), or a new one numbered next, with all its
    rows. Call it inside a transaction, once who may add to
    ``tokenizer`` is checked (``tokenizer_to_add_to``: at a run's start, at an import).
    ``core`` may be an engine of another library (``engines``): its canonical file is kept."""
    kind = kind_of(core)
    digest = digest or kind.digest(core)
    Tokenizer.objects.select_for_update().filter(pk=tokenizer.pk).first()  # one numberer at a time
    existing = TokenizerVersion.objects.filter(tokenizer=tokenizer, digest=digest).first()
    if existing is not None:
        return existing, False
    latest = tokenizer.versions.aggregate(latest=Max("number"))["latest"] or 0
    cut = core.pattern  # a regex, a char-level word split, or an engine's description
    engine, char_level = kind.stored_in == FILE, kind.has_alphabet
    version = TokenizerVersion.objects.create(
        tokenizer=tokenizer, number=latest + 1, algorithm=core.algorithm,
        pattern="" if engine or char_level else cut, split=cut if char_level else "",
        engine_description=cut if engine else "", options=core.options,
        special_tokens=core.special_tokens, vocab_size=len(core.vocab),
        merge_count=len(core.merges), digest=digest, source=source,
        source_detail=source_detail[:255], training_run=training_run, created_by=created_by)
    if kind.stored_in == FILE:
        version.write_engine_contents(core)
    else:
        version.write_contents(core)
    version.mark_ready()
    for corpus in Corpus.objects.for_evaluation():
        queue_evaluation(version=version, corpus=corpus)
    return version, True


def tokenizer_to_add_to(*, name: str, user) -> Tokenizer:
    """The tokenizer ``name`` that ``user`` adds a version to: a new one, owned by ``user``, or
    the existing one when ``user`` may add to it (``Forbidden`` when not). Call it inside a
    transaction; call ``check_may_add_to`` first to refuse before any other check."""
    tokenizer, created = Tokenizer.objects.get_or_create(
        name=name, defaults={"owner": recorded(user)})
    check_may_add_version(user, None if created else tokenizer, name)
    return tokenizer


def check_may_add_to(*, name: str, user) -> None:
    """``Forbidden`` unless ``user`` may add a version to the tokenizer ``name`` (or create it)."""
    check_may_add_version(user, Tokenizer.objects.filter(name=name).first(), name)


ENGINE_FORMATS = tuple(f for f in read_formats() if f not in FORMATS)  # read by an engine only
IMPORT_FORMATS = (*FORMATS, *ENGINE_FORMATS)


def import_tokenizer(**request) -> TokenizerVersion:
    """``import_or_find_tokenizer``'s version, for a caller to which either will do."""
    return import_or_find_tokenizer(**request)[0]


def import_or_find_tokenizer(*, files: dict[str, bytes], tokenizer_name: str,
                             format: str | None = None, pattern: str | None = None,
                             special_tokens: dict[str, int] | None = None,
                             source_detail: str = "",
                             created_by=OPERATOR) -> tuple[TokenizerVersion, bool]:
    """``(version, created)``: a version from tokenizer files (the format is detected when not given): byte-level and
    character-level BPE in any format the core reads; any other ``tokenizer.json`` that Hugging
    Face ``tokenizers`` loads (or a ``transformers`` folder holding one), kind ``hf``; a
    SentencePiece model (recognised by its content), kind ``sentencepiece``. The same content as
    an existing version of the tokenizer gives that version back (``created`` false). Only the tokenizer's owner or
    staff may import into an existing tokenizer (``permissions``). A custom pattern is tried on
    adversarial inputs first (``check_pattern``): one that backtracks without end is refused.
    ``pattern`` is for GPT-2 files, which hold none (``pattern_note`` says which one the
    version got), and for a bare tiktoken rank file, with its ``special_tokens`` (a published
    encoding's file is recognised by its sha256 and needs neither; the version's source says so).
    Files that nothing reads are ``Invalid``, and leave no row."""
    check_name("tokenizer", tokenizer_name)
    check_may_add_to(name=tokenizer_name, user=created_by)
    if format is not None and format not in IMPORT_FORMATS:
        raise Invalid(f"unknown format {format!r}; choose one of {', '.join(IMPORT_FORMATS)}",
                      field="format")
    check_json_files(files)
    core = read_tokenizer(files, format, pattern, special_tokens)
    if core.algorithm in KINDS:
        KINDS[core.algorithm].check_import(core)
    else:
        raise Invalid(f"the registry imports byte-level and character-level BPE, Hugging Face "
                      f"and SentencePiece tokenizers; these files hold a {core.algorithm} "
                      f"tokenizer", field="files")
    detail = source_detail or f"imported from {', '.join(sorted(files))}"
    if getattr(core, "recognised_as", None):
        detail = f"{detail}; recognised as tiktoken's {core.recognised_as}"
    with transaction.atomic():
        tokenizer = tokenizer_to_add_to(name=tokenizer_name, user=created_by)
        return add_or_find_version(tokenizer=tokenizer, core=core,
                                   source=TokenizerVersion.Source.IMPORT, source_detail=detail,
                                   created_by=recorded(created_by))


def import_trained_wordpiece(*, lines: list[str], tokenizer_name: str,
                             corpus_name: str) -> TokenizerVersion:
    """A BERT-style WordPiece trained with Hugging Face ``tokenizers`` on ``lines`` (of the
    corpus ``corpus_name``), imported as a version of kind ``hf``: the demo's tokenizer of
    another kind."""
    return import_tokenizer(files={"tokenizer.json": train_wordpiece(lines)},
                            tokenizer_name=tokenizer_name,
                            source_detail=f"trained at demo load with Hugging Face tokenizers' "
                                          f"WordPiece trainer on {corpus_name}")


def read_tokenizer(files: dict[str, bytes], format: str | None, pattern: str | None,
                   special_tokens: dict[str, int] | None = None):
    """The core's tokenizer of the files, else the engine that reads them (``hf``,
    ``sentencepiece``); ``Invalid`` saying why neither can."""
    refused = None
    if format not in ENGINE_FORMATS:
        try:
            detected = format or detect_format(files)
        except ValueError as exc:
            detected, refused = None, exc
        if pattern is not None and detected not in PATTERNLESS_FORMATS:
            raise Invalid(f"these files name their own pattern; a pattern is given only for "
                          f"{GIVEN_PATTERN}", field="pattern")
        if special_tokens is not None and detected != "tiktoken":
            raise Invalid("these files name their own special tokens; special tokens are given "
                          "only for bare tiktoken rank files", field="special_tokens")
        if detected is not None:
            try:
                return loads_tokenizer(files, detected, pattern=pattern,
                                       special_tokens=special_tokens)
            except ValueError as exc:
                refused = exc
    try:
        engine = read_engine_files_checked(files, format)  # in a disposable child
    except EngineFailed:
        raise
    except ValueError as exc:
        raise Invalid(f"{exc}" + (f" (the registry's own reader: {refused})" if refused
                                  else ""), field="files") from None
    if engine is None:
        raise Invalid(f"{refused}; nor is any of them a tokenizer.json that Hugging Face "
                      f"tokenizers loads or a SentencePiece model", field="files")
    return engine
