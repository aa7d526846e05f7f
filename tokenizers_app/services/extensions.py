"""Extension runs: a new version of a tokenizer that continues a parent version's merges on new
corpora, so that every parent id keeps its token and role and new ids follow the parent's
largest (``bpe/extension.py``). A run like any other (queue, fan-out, progress, cancel, reaper,
sweeps), whose row names its parent (``TrainingRun.extends``)."""

from __future__ import annotations

from dataclasses import replace

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from ..bpe.parameters import check_training_parameters
from ..errors import Invalid, NotFound
from ..models import Corpus, TokenizerVersion, TrainingRun
from .permissions import OPERATOR, recorded
from .queue import TRAIN, QueueUnavailable, send_on_commit
from .runs import resolve_corpora
from .versions import check_may_add_to, tokenizer_to_add_to

def is_extendable(version: TokenizerVersion) -> bool:
    """Whether an extension run can continue ``version``, as its kind says (``kind.extendable``):
    BPE of our core, or a SentencePiece or ``tokenizer.json`` model whose type, read from its
    stored canonical file, is BPE."""
    return version.kind.extendable(version.canonical_content())


def extendable_parent(ref: str) -> TokenizerVersion:
    """The version ``NAME@REF`` names, if its kind can be extended (``Invalid`` in words, with
    field ``extends``, when not)."""
    parent = TokenizerVersion.objects.select_related("tokenizer").resolve(ref)
    if not is_extendable(parent):
        raise Invalid(f"{parent.label} is a {parent.get_algorithm_display()} "
                      f"({parent.shown_pattern.split(';', 1)[0]}): extension runs continue the merges "
                      f"of byte-level or character-level BPE versions and the pieces of "
                      f"SentencePiece or tokenizer.json BPE models. Unigram and WordPiece have "
                      f"no merge order to continue", field="extends")
    return parent


def start_extension_run(*, extends: str, corpora, vocab_size: int, min_frequency: int = 1,
                        sweep=(), tokenizer_name: str | None = None,
                        created_by=OPERATOR) -> TrainingRun:
    """Validate, commit the run row (its pattern, special tokens and options are the parent's),
    and enqueue its task once committed. The result is a new version of the parent's tokenizer:
    ``tokenizer_name``, when given, must be that tokenizer's name."""
    parent = extendable_parent(extends)
    name = parent.tokenizer.name
    if tokenizer_name not in (None, "", name):
        raise Invalid(f"an extension of {parent.label} is a new version of {name!r}, not of "
                      f"{tokenizer_name!r}: leave the tokenizer out, or name {name!r}",
                      field="tokenizer")
    check_may_add_to(name=name, user=created_by)
    if vocab_size is None or int(vocab_size) <= parent.vocab_size:
        raise Invalid(f"vocab_size {vocab_size} must be above the {parent.vocab_size:,} tokens of "
                      f"{parent.label}: an extension only adds tokens", field="vocab_size")
    if sweep and not parent.kind.sweeps:
        raise Invalid(f"{parent.kind.no_sweep_reason}: leave the sweep out", field="sweep")
    bad_sweep = [size for size in sweep if size <= parent.vocab_size]
    if bad_sweep:
        raise Invalid(f"sweep size {bad_sweep[0]} must be above the {parent.vocab_size:,} "
                      f"tokens of {parent.label}", field="sweep")
    params = check_training_parameters(
        vocab_size=vocab_size, min_frequency=min_frequency, sweep=sweep,
        max_vocab_size=settings.MAX_VOCAB_SIZE)
    corpora = resolve_corpora(corpora)
    char_level = parent.kind.has_alphabet  # its word split and case are kept
    params = replace(  # what the run does not choose is the parent's
        params, algorithm=parent.algorithm, special_tokens=list(parent.special_tokens),
        pattern="" if char_level else parent.pattern,
        lowercase=bool(parent.options.get("lowercase", False)) if char_level else False,
        split=parent.split if char_level else "whitespace", min_word_frequency=1)
    unsent: list[Exception] = []
    with transaction.atomic():
        kept = Corpus.objects.select_for_update().filter(pk__in=[c.pk for c in corpora])
        if kept.count() < len(corpora):
            raise NotFound("a corpus of this run was deleted meanwhile: choose the corpora again")
        tokenizer = tokenizer_to_add_to(name=name, user=created_by)
        run = TrainingRun.objects.create(
            tokenizer=tokenizer, algorithm=parent.algorithm, parameters=params.as_json(),
            extends=parent,
            created_by=recorded(created_by), heartbeat_at=timezone.now())
        run.corpora.set(corpora)
        send_on_commit(TRAIN, run.pk, on_failure=unsent.append)
    if unsent:
        run.mark_unsent()
        raise QueueUnavailable(run, f"run {run.pk} is saved, but the task queue does not answer "
                                    f"(the reason is in the server's log): the run waits for "
                                    f"the queue and is sent when it is back")
    return run
