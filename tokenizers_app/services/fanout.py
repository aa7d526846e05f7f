"""Counting a large corpus on several workers: one count task per byte range, then one merge task.
Each kind counts its own way (``kind.count_range``: byte-level BPE pre-tokens, character-level
BPE words); all cut the corpus at safe points (after a newline or a special token).

A Celery chord needs a result backend, and job state lives in the database instead: each count
task marks its ``CountPart`` done, and the one that finishes the last part (decided under a lock
on the run row) enqueues the merge task.
"""

from __future__ import annotations

import json
import logging
from collections import Counter

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from ..bpe.counting import add_counts, plan_ranges, scaled
from ..bpe.training import Ticker
from ..models import Corpus, CountPart, TrainingRun
from ..storage import ObjectRanges, get_store
from .attempts import LostRun, RunReporter, recording_outcome, save_training_result
from .extension_results import extend_counts
from .queue import COUNT_PART, MERGE_COUNTS, send_on_commit

log = logging.getLogger(__name__)
Status, Stage = TrainingRun.Status, TrainingRun.Stage


def fan_out_counting(*, run: TrainingRun) -> None:
    """Split the run's corpora into byte ranges at safe cuts and enqueue one count task each."""
    pattern = run.kind.cut_pattern(run.params)  # where a part may end
    ranges = [(corpus, start, end) for corpus in run.corpora.order_by("name")
              for start, end in plan_ranges(corpus_ranges(corpus), pattern,
                                            run.special_tokens, settings.FANOUT_PART_BYTES)]
    with transaction.atomic():
        if run.owned(run.attempt).select_for_update().first() is None:
            raise LostRun(f"run {run.pk} attempt {run.attempt} was taken over")
        parts = CountPart.objects.bulk_create(
            CountPart(run=run, attempt=run.attempt, index=index, corpus=corpus, start=start,
                      end=end) for index, (corpus, start, end) in enumerate(ranges))
        run.owned(run.attempt).update(fanout_parts=len(parts), heartbeat_at=timezone.now())
        for part in parts:
            send_on_commit(COUNT_PART, part.pk)


def count_corpus_part(*, part_id: int, worker: str = "") -> None:
    """Count one byte range of a fanned-out run and store the counts; the last part to finish
    enqueues the merge task. A duplicate delivery, or a part of an old attempt, does nothing."""
    part = CountPart.objects.select_related("run__tokenizer", "corpus").filter(pk=part_id).first()
    if part is None or part.done or part.run.attempt != part.attempt:
        return
    run = part.run
    if run.status != Status.RUNNING:
        return
    reporter = RunReporter(run, track_progress=False)
    with recording_outcome(run):
        ticker = Ticker(reporter.progress, reporter.should_stop)
        def tick(done, total):  # noqa: E306
            ticker(Stage.COUNT, done, total)
        source = corpus_ranges(part.corpus)  # only this part's bytes are read (one ranged read)
        counts = run.kind.count_range(source, part.start, part.end, run.params, tick)
        name = _part_counts_name(part)
        # written whole or not at all (a full disk fails the attempt in words)
        get_store().write_bytes(name, json.dumps(counts, ensure_ascii=False).encode())
        _complete_part(part, worker, name)


def corpus_ranges(corpus: Corpus) -> ObjectRanges:
    """The corpus's bytes as the core's counting reads them: by byte range, from the store."""
    return ObjectRanges(get_store(), corpus.object_name, corpus.size_bytes)


def _part_counts_name(part: CountPart) -> str:
    return f"runs/{part.run_id}/attempt-{part.attempt}/part-{part.index}.json"


def _complete_part(part: CountPart, worker: str, name: str) -> None:
    with transaction.atomic():
        if part.run.owned(part.attempt).select_for_update().first() is None:
            return  # the run was cancelled, failed, or re-queued meanwhile
        if not part.mark_done(worker, name):
            return  # a duplicate delivery finished this part first
        TrainingRun.objects.filter(pk=part.run_id).update(
            progress_done=F("progress_done") + part.size, heartbeat_at=timezone.now())
        parts = CountPart.objects.filter(run=part.run_id, attempt=part.attempt)
        if not parts.filter(done=False).exists():
            send_on_commit(MERGE_COUNTS, part.run_id, part.attempt)


def merge_counted_run(*, run_id: int, attempt: int) -> None:
    """Sum the parts' counts of a fanned-out run, learn the merges and save the versions."""
    run = TrainingRun.objects.select_related("tokenizer").filter(pk=run_id).first()
    if run is None or run.attempt != attempt:
        return
    claimed = run.owned(attempt).filter(stage=Stage.COUNT).update(stage=Stage.MERGE,
                                                                  heartbeat_at=timezone.now())
    if not claimed:
        return  # a duplicate delivery
    elapsed = (timezone.now() - run.started_at).total_seconds()
    reporter = RunReporter(run, seconds={Stage.COUNT: elapsed})
    with recording_outcome(run):
        counts = merged_part_counts(run=run, attempt=attempt)
        if run.extends_id is not None:  # an extension run (services.extensions)
            result = extend_counts(run=run, counts=counts, reporter=reporter)
        else:
            result = run.kind.train_counted(counts, run.params, progress=reporter.progress,
                                            should_stop=reporter.should_stop,
                                            max_pretoken_bytes=settings.MAX_PRETOKEN_BYTES)
        save_training_result(run=run, reporter=reporter, result=result)
    if not settings.FANOUT_KEEP_COUNTS:
        _remove_part_files(run_id, attempt)  # only this attempt's: a newer one may be counting


def merged_part_counts(*, run: TrainingRun, attempt: int) -> dict[bytes, int]:
    """The summed counts of every part of one attempt, as UTF-8 bytes -> count; a part's counts
    are multiplied by its corpus's weight in the run (``counting.scaled``)."""
    total: Counter[str] = Counter()
    store = get_store()
    for counts_file, corpus_name in CountPart.objects.filter(run=run, attempt=attempt) \
            .order_by("index").values_list("counts_file", "corpus__name"):
        add_counts(total, scaled(json.loads(store.read_bytes(counts_file)),
                                 run.weight_of(corpus_name)))
    return {word.encode(): count for word, count in total.items()}


def _remove_part_files(run_id: int, attempt: int) -> None:
    """This attempt's count files (and the run's folder, when no other attempt's are left);
    a store that does not answer leaves them to the sweep."""
    try:
        get_store().delete_prefix(f"runs/{run_id}/attempt-{attempt}/")
    except Exception as exc:
        log.warning("count files of run %s attempt %s kept for the sweep: %s", run_id, attempt,
                    exc)
