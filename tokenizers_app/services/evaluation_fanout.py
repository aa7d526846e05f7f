"""Evaluating a large corpus on several workers, as counting is (``services.fanout``): the corpus
is cut into byte ranges where its tokenizer's kind allows (``bpe.eval_parts.plan_parts``), one
task evaluates each range and stores its totals (``bpe.eval_totals.EvalTotals``) as a file, and
the task that finishes the last part (decided under a lock on the evaluation row) enqueues the
merge, which sums the totals and records the metrics: exactly those of one process.

Each part belongs to one attempt of its evaluation (its ``attempts`` when it fanned out). A
worker killed mid-part leaves the evaluation running; the reaper queues it again, and the new
attempt carries over the parts done before (same range, same totals) and evaluates only the
others.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from ..bpe.eval_parts import part_blocks, plan_parts
from ..bpe.inspection import in_running_text
from ..engines.evaluation_pass import totals_and_words
from ..engines.registry import cut_rule, metrics_of_totals
from ..models import Evaluation, EvaluationPart
from ..storage import ObjectRanges, get_store
from .evaluation_failures import failure_words
from .evaluation_files import merged_parts, write_part
from .evaluation_progress import Stopped, reported
from .heartbeats import Heartbeat
from .queue import EVALUATE_PART, MERGE_EVALUATION, send_on_commit

log = logging.getLogger(__name__)
Status = Evaluation.Status
WORDS_KEPT = 2000  # the most frequent words of the corpus, with their ids, per evaluation


def fans_out(evaluation: Evaluation) -> bool:
    """Whether this evaluation is split into parts: its corpus is above ``FANOUT_MIN_BYTES``
    and no cap (``EVALUATION_MAX_BYTES``) keeps it to its start."""
    size = evaluation.corpus.size_bytes
    cap = settings.EVALUATION_MAX_BYTES
    return size > settings.FANOUT_MIN_BYTES and not (cap and cap < size)


def corpus_ranges(evaluation: Evaluation) -> ObjectRanges:
    corpus = evaluation.corpus
    return ObjectRanges(get_store(), corpus.object_name, corpus.size_bytes)


def fan_out_evaluation(evaluation: Evaluation, tokenizer) -> bool:
    """Plan the parts of this attempt and send a task for each not done yet; False when the
    corpus has no allowed cut (one part: the caller evaluates it in one process)."""
    ranges = plan_parts(corpus_ranges(evaluation), cut_rule(tokenizer),
                        settings.FANOUT_PART_BYTES)
    if len(ranges) < 2:
        return False
    attempt = evaluation.attempts
    with transaction.atomic():
        owned = Evaluation.objects.select_for_update().filter(
            pk=evaluation.pk, status=Status.RUNNING, attempts=attempt).first()
        if owned is None:
            return True  # requeued meanwhile: the newer attempt does it
        done_before = {(part.start, part.end): part.totals_file for part in
                       EvaluationPart.objects.filter(evaluation=evaluation, done=True)
                       .exclude(attempt=attempt).order_by("attempt")}
        parts = EvaluationPart.objects.bulk_create(
            EvaluationPart(evaluation=evaluation, attempt=attempt, index=index, start=start,
                           end=end, done=(start, end) in done_before,
                           totals_file=done_before.get((start, end), ""),
                           worker="(carried over)" if (start, end) in done_before else "")
            for index, (start, end) in enumerate(ranges))
        Evaluation.objects.filter(pk=evaluation.pk).update(
            fanout_parts=len(parts), bytes_done=sum(part.size for part in parts if part.done))
        waiting = [part for part in parts if not part.done]
        for part in waiting:
            send_on_commit(EVALUATE_PART, part.pk)
        if not waiting:
            send_on_commit(MERGE_EVALUATION, evaluation.pk, attempt)
    return True


def _part_name(part: EvaluationPart) -> str:
    return (f"evaluations/{part.evaluation_id}/attempt-{part.attempt}/"
            f"part-{part.index}.json")


def _current(part: EvaluationPart) -> bool:
    return Evaluation.objects.filter(pk=part.evaluation_id, status=Status.RUNNING,
                                     attempts=part.attempt).exists()


def evaluate_corpus_part(*, part_id: int, worker: str = "") -> None:
    """Evaluate one byte range and store its totals; the last part done sends the merge. A
    duplicate delivery, or a part of an old attempt, does nothing."""
    part = EvaluationPart.objects.select_related("evaluation__version", "evaluation__corpus") \
        .filter(pk=part_id).first()
    if part is None or part.done or not _current(part):
        return
    evaluation = part.evaluation
    _beat(part)
    heartbeat = Heartbeat(f"evaluation {evaluation.pk} part {part.index}", lambda: _running(part))
    heartbeat.start_unless_in_transaction()  # a long part is a living worker, not a dead one
    try:
        tokenizer = evaluation.version.load_tokenizer()
        source = corpus_ranges(evaluation)
        blocks = reported(part_blocks(source, part.start, part.end), lambda: _running(part))
        totals, frequent = totals_and_words(tokenizer, blocks)  # one pass: the words too
        name = _part_name(part)
        write_part(get_store(), name, totals, frequent)
    except Stopped:  # cancelled, or queued again: nothing to store
        log.info("evaluation %s part %s stopped: cancelled or queued again", evaluation.pk,
                 part.index)
        return
    except Exception as exc:  # the evaluation fails in words (the merge never comes)
        log.warning("evaluation %s part %s failed: %s", evaluation.pk, part.index, exc)
        evaluation.record(error=failure_words(evaluation, exc))
        return
    finally:
        heartbeat.stop()
    with transaction.atomic():
        owned = Evaluation.objects.select_for_update().filter(
            pk=part.evaluation_id, status=Status.RUNNING, attempts=part.attempt).first()
        if owned is None or not part.mark_done(worker, name):
            return
        _beat(part)
        left = EvaluationPart.objects.filter(evaluation=part.evaluation_id,
                                             attempt=part.attempt, done=False)
        if not left.exists():
            send_on_commit(MERGE_EVALUATION, part.evaluation_id, part.attempt)


def _running(part: EvaluationPart):
    """The part's evaluation, while this attempt of it runs."""
    return Evaluation.objects.filter(pk=part.evaluation_id, status=Status.RUNNING,
                                     attempts=part.attempt)


def _beat(part: EvaluationPart) -> None:
    """A part starting or done moves its evaluation's heartbeat on (and a part at work beats
    from its own thread): the reaper takes an evaluation in parts for dead only when no part
    beat for ``EVALUATION_STALE_SECONDS``. ``started_at`` stays the attempt's start, from which
    the time left is reckoned."""
    _running(part).update(heartbeat_at=timezone.now())


def merge_evaluation_parts(*, evaluation_id: int, attempt: int) -> None:
    """Sum the parts' totals of one attempt and record the metrics."""
    evaluation = Evaluation.objects.select_related("version", "corpus").filter(
        pk=evaluation_id, status=Status.RUNNING, attempts=attempt).first()
    if evaluation is None:
        return  # recorded already (a duplicate delivery), or requeued
    store = get_store()
    try:
        tokenizer = evaluation.version.load_tokenizer()
        names = list(EvaluationPart.objects.filter(evaluation=evaluation, attempt=attempt)
                     .order_by("index").values_list("totals_file", flat=True))
        merged, frequent = merged_parts(store, names)
        metrics = metrics_of_totals(tokenizer, merged)
        metrics["parts"] = len(names)
        ranked = sorted(frequent.items(), key=lambda item: (-item[1], item[0]))[:WORDS_KEPT]
        words = [[word, count, in_running_text(tokenizer, word)] for word, count in ranked]
    except Exception as exc:
        log.warning("evaluation %s merge failed: %s", evaluation.pk, exc)
        evaluation.record(error=failure_words(evaluation, exc))
        return
    if evaluation.record(metrics=metrics, word_tokens=words):
        try:
            store.delete_prefix(f"evaluations/{evaluation.pk}/")
        except Exception as exc:  # the sweep removes them later
            log.warning("part files of evaluation %s kept for the sweep: %s", evaluation.pk, exc)
