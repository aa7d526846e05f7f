"""Training runs: start one (checked, committed, then enqueued), cancel it, execute it in a worker,
and the reaper that deals with runs whose worker went silent."""

from __future__ import annotations

import logging
from contextlib import ExitStack
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from ..bpe.parameters import check_training_parameters
from ..bpe.pattern_check import check_pattern
from ..bpe.pretokenize import PreTokenizer
from ..engines.registry import DEFAULT_KIND, kind_named
from ..errors import Damaged, NotFound
from ..models import Corpus, TrainingRun, check_name
from ..storage import get_store, local_copy
from .attempts import RunReporter, recording_outcome, save_training_result
from .corpus_weights import resolve_corpora, weighted_names
from .extension_results import extend_files, is_library_run
from .fanout import fan_out_counting
from .permissions import OPERATOR, check_may_cancel, recorded
from .queue import TRAIN, QueueUnavailable, send_on_commit
from .versions import check_may_add_to, tokenizer_to_add_to

log = logging.getLogger(__name__)

Status = TrainingRun.Status


def start_training_run(*, corpora, tokenizer_name: str, vocab_size: int, special_tokens=None,
                       pattern: str | None = None, min_frequency: int = 1, sweep=(),
                       algorithm: str = DEFAULT_KIND, lowercase: bool | None = None,
                       split: str | None = None, min_word_frequency: int | None = None,
                       created_by=OPERATOR) -> TrainingRun:
    """Validate the parameters, commit the run row, and enqueue its task once committed.

    ``corpora``: Corpus objects or corpus names. ``sweep``: smaller vocab sizes to register as
    versions too, from the merge prefixes of the same run. ``algorithm``: a kind that trains
    (``engines.registry``; byte-level BPE with ``pattern``, character-level BPE with
    ``lowercase``, ``split``, ``min_word_frequency``); None is "not given", and a parameter of
    another algorithm given is refused. The core checks the
    parameters (``bpe.parameters``); the registry adds only its bounds, ``MAX_VOCAB_SIZE`` and
    ``MAX_SWEEP_SIZES``.
    ``created_by`` trains into a tokenizer it owns (or any, as staff), or a new one that it then
    owns.
    """
    check_name("tokenizer", tokenizer_name)
    check_may_add_to(name=tokenizer_name, user=created_by)
    params = check_training_parameters(
        algorithm=algorithm, vocab_size=vocab_size, special_tokens=special_tokens,
        pattern=pattern, min_frequency=min_frequency, sweep=sweep, lowercase=lowercase,
        split=split, min_word_frequency=min_word_frequency,
        max_vocab_size=settings.MAX_VOCAB_SIZE, max_sweep_sizes=settings.MAX_SWEEP_SIZES)
    names, weights = weighted_names(corpora)
    corpora = resolve_corpora(names)
    if kind_named(params.algorithm).has_regex:
        check_pattern_on_samples(params.pattern, corpora)
    unsent: list[Exception] = []
    with transaction.atomic():
        kept = Corpus.objects.select_for_update().filter(pk__in=[c.pk for c in corpora])
        if kept.count() < len(corpora):  # deleted since (services.deletions locks them too)
            raise NotFound("a corpus of this run was deleted meanwhile: choose the corpora again")
        tokenizer = tokenizer_to_add_to(name=tokenizer_name, user=created_by)
        run = TrainingRun.objects.create(
            tokenizer=tokenizer, algorithm=params.algorithm, parameters=params.as_json(),
            corpus_weights=weights, created_by=recorded(created_by), heartbeat_at=timezone.now())
        run.corpora.set(corpora)
        send_on_commit(TRAIN, run.pk, on_failure=unsent.append)
    if unsent:
        run.mark_unsent()  # the run page warns of the lost task only then
        raise QueueUnavailable(run, f"run {run.pk} is saved, but the task queue does not answer "
                                    f"(the reason is in the server's log): the run waits for "
                                    f"the queue and is sent when it is back")
    return run


PATTERN_SAMPLE_BYTES = 64 * 1024


def check_pattern_on_samples(pattern: str, corpora: list[Corpus]) -> None:
    """Try a custom pattern on adversarial inputs (``check_pattern``) and on the first 64 KB of
    each corpus before the run is queued, so a pattern that backtracks without end or skips text
    fails here, in words, not in a worker or, once stored, in every request that encodes."""
    pretokenizer = PreTokenizer(pattern)
    if not pretokenizer.checked:
        return
    check_pattern(pattern)
    for corpus in corpora:
        try:
            sample = get_store().read_range(corpus.object_name, 0, PATTERN_SAMPLE_BYTES).decode(
                "utf-8", "ignore")
        except OSError as exc:
            raise Damaged(f"the file of corpus {corpus.name!r} cannot be read "
                          f"({exc.strerror}); run manage.py verify") from None
        pretokenizer.check_sample(sample, f"corpus {corpus.name!r}")


def cancel_training_run(*, run: TrainingRun, user=OPERATOR) -> TrainingRun:
    """Cancel a run: a queued run at once; a running one within a second (its worker stops).
    Only the user who started it, or staff, may (``Forbidden`` otherwise)."""
    check_may_cancel(user, run)
    run.request_cancel()
    return run


def execute_training_run(*, run_id: int) -> None:
    """Run a queued training run in this worker: count the corpora (or fan the counting out to
    count tasks), merge, and save the versions. A duplicate delivery does nothing."""
    total = sum(Corpus.objects.filter(runs=run_id).values_list("size_bytes", flat=True))
    run = TrainingRun.objects.claim(run_id, total)
    if run is None:
        log.info("run %s is not queued: nothing to do", run_id)
        return
    reporter = RunReporter(run)
    with recording_outcome(run):
        if total > settings.FANOUT_MIN_BYTES and not is_library_run(run):
            return fan_out_counting(run=run)
        corpora = list(run.corpora.order_by("name"))
        weights = run.weights_for(corpora)  # None when every corpus weighs 1 (as before)
        with ExitStack() as copies:  # the corpus files themselves, or copies from a bucket
            paths = [copies.enter_context(local_copy(get_store(), corpus.object_name,
                                                     corpus.sha256, corpus.size_bytes))
                     for corpus in corpora]
            if run.extends_id is not None:  # an extension run (services.extensions)
                result = extend_files(run=run, paths=paths, reporter=reporter)
                return save_training_result(run=run, reporter=reporter, result=result)
            result = run.kind.train(paths, run.params, progress=reporter.progress,
                                    should_stop=reporter.should_stop,
                                    max_pretoken_bytes=settings.MAX_PRETOKEN_BYTES,
                                    weights=weights)
        save_training_result(run=run, reporter=reporter, result=result)


def reap_runs(*, stale_seconds: int | None = None, max_attempts: int | None = None) -> dict:
    """Deal with runs whose worker went silent: a running run with a stale heartbeat is re-queued
    (or cancelled, when a cancel is pending, or failed after ``max_attempts``); a queued run whose
    task seems lost is sent again. Returns the run ids per outcome."""
    stale_seconds = settings.RUN_STALE_SECONDS if stale_seconds is None else stale_seconds
    max_attempts = settings.RUN_MAX_ATTEMPTS if max_attempts is None else max_attempts
    cutoff = timezone.now() - timedelta(seconds=stale_seconds)
    outcome: dict[str, list[int]] = {"requeued": [], "failed": [], "cancelled": [], "resent": []}
    for run in TrainingRun.objects.stale(cutoff):
        with transaction.atomic():
            if run.owned(run.attempt).stale(cutoff).select_for_update().first() is not None:
                outcome[_reap(run, max_attempts)].append(run.pk)
    for run in TrainingRun.objects.waiting_since(cutoff):
        if run.mark_resent():
            send_on_commit(TRAIN, run.pk)
            outcome["resent"].append(run.pk)
    return outcome


def _reap(run: TrainingRun, max_attempts: int) -> str:
    if run.cancel_requested:
        run.finish(Status.CANCELLED)
        return "cancelled"
    if run.attempt >= max_attempts:
        run.finish(Status.FAILED, error=(
            f"the worker running this run stopped responding {run.attempt} times (last "
            f"heartbeat {run.heartbeat_at:%Y-%m-%d %H:%M:%S} UTC); it may have run out of memory "
            f"or been killed: check the worker logs, then start the run again"))
        return "failed"
    run.requeue()
    send_on_commit(TRAIN, run.pk)
    return "requeued"
