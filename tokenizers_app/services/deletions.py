"""Deleting what nothing depends on: a corpus, a tokenizer or a run, by its uploader, owner or
starter, or by staff (``permissions.check_may_delete``). Anything that something refers to is
kept, and the refusal (``Conflict``, 409) says what depends on it:

- a corpus: the runs trained on it, the evaluations computed on it;
- a tokenizer: its versions, its runs;
- a run: the versions it made; a run still queued or running is cancelled first.

Versions are never deleted: a version's number, digest and downloads are promises (a link, a
pinned ``NAME@3``, a comparison, a published model name it), so a version is deprecated instead.
A deleted corpus's file goes from the store once the row's deletion is committed; if the store
does not answer then, the sweep removes the file later (a corpus file no row holds).
"""

from __future__ import annotations

import logging

from django.db import transaction

from ..errors import Conflict
from ..models import Corpus, Evaluation, ParallelSet, Tokenizer, TokenizerVersion, TrainingRun
from ..storage import get_store
from .permissions import OPERATOR, check_may_delete

log = logging.getLogger(__name__)
NAMED_MOST = 5  # dependents named in a refusal; the rest are counted


def corpus_dependents(corpus: Corpus) -> list[str]:
    """What depends on ``corpus``, in words (empty: it may be deleted)."""
    return _said([("run", "trained on it", TrainingRun.objects.filter(corpora=corpus),
                   lambda r: str(r.pk)),
                  ("evaluation", "computed on it",
                   Evaluation.objects.filter(corpus=corpus).select_related("version__tokenizer"),
                   lambda e: e.version.label),
                  ("parallel set", "holding it as a language",
                   ParallelSet.objects.filter(members__corpus=corpus), lambda s: s.name)])


def tokenizer_dependents(tokenizer: Tokenizer) -> list[str]:
    return _said([("version", "of it", TokenizerVersion.objects.filter(tokenizer=tokenizer)
                   .select_related("tokenizer"), lambda v: v.label),
                  ("run", "training it", TrainingRun.objects.filter(tokenizer=tokenizer),
                   lambda r: str(r.pk))])


def run_dependents(run: TrainingRun) -> list[str]:
    made = TokenizerVersion.objects.filter(training_run=run) | run.versions.all()
    found = _said([("version", "made by it", made.select_related("tokenizer").distinct(),
                    lambda v: v.label)])
    if not run.is_finished:
        found.insert(0, f"it is {run.get_status_display().lower()}: cancel it first")
    return found


def delete_corpus(*, corpus: Corpus, user=OPERATOR) -> None:
    check_may_delete(user, f"corpus {corpus.name!r}", corpus.uploaded_by, "uploader")
    with transaction.atomic():
        locked = Corpus.objects.select_for_update().get(pk=corpus.pk)
        _refuse_if_used(f"corpus {corpus.name!r}", corpus_dependents(locked))
        stored = locked.object_name
        locked.delete()
        transaction.on_commit(lambda: _remove_file(stored))


def delete_tokenizer(*, tokenizer: Tokenizer, user=OPERATOR) -> None:
    check_may_delete(user, f"tokenizer {tokenizer.name!r}", tokenizer.owner, "owner")
    with transaction.atomic():
        locked = Tokenizer.objects.select_for_update().get(pk=tokenizer.pk)
        _refuse_if_used(f"tokenizer {tokenizer.name!r}", tokenizer_dependents(locked))
        locked.delete()


def delete_run(*, run: TrainingRun, user=OPERATOR) -> None:
    check_may_delete(user, f"run {run.pk}", run.created_by, "starter")
    with transaction.atomic():
        locked = TrainingRun.objects.select_for_update().get(pk=run.pk)
        _refuse_if_used(f"run {run.pk}", run_dependents(locked))
        locked.delete()


def _refuse_if_used(what: str, dependents: list[str]) -> None:
    if dependents:
        raise Conflict(f"{what} cannot be deleted: {'; '.join(dependents)}. Only what nothing "
                       f"depends on is deleted (versions are never deleted: deprecate them)")


def _said(kinds) -> list[str]:
    """``["2 runs trained on it (3, 5)"]``: each kind of dependent that exists, counted, the
    first ``NAMED_MOST`` named."""
    found = []
    for noun, how, query, name in kinds:
        count = query.count()
        if count:
            named = ", ".join(name(item) for item in query.order_by("pk")[:NAMED_MOST])
            more = ", ..." if count > NAMED_MOST else ""
            found.append(f"{count} {noun}{'' if count == 1 else 's'} {how} ({named}{more})")
    return found


def _remove_file(name: str) -> None:
    """The deleted corpus's file, unless another row holds it; a store that does not answer
    leaves it to the sweep."""
    if Corpus.objects.filter(object_name=name).exists():
        return
    try:
        get_store().delete(name)
    except Exception:  # noqa: BLE001 -- the row is gone; the sweep removes the file later
        log.warning("the file %s of a deleted corpus was not removed; the sweep will", name,
                    exc_info=True)
