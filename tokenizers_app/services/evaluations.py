"""Evaluations: queue one per (version, evaluation corpus), when a version is added, when a
corpus becomes an evaluation corpus, or on request; compute it in a worker (or here, on
request), and queue again those whose worker died."""

from __future__ import annotations

import logging
from contextlib import contextmanager
from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from ..bpe.corpus import read_lines
from ..bpe.inspection import ranked_word_tokens
from ..engines.evaluation_pass import totals_and_words
from ..engines.registry import metrics_of_totals
from ..engines.sandbox import EngineFailed
from ..errors import (
    Invalid,
    StoreUnavailable,
    Unencodable,
    is_library_panic,
    panic_words,
)
from ..models import Corpus, Evaluation, TokenizerVersion
from ..storage import get_store
from .heartbeats import Heartbeat
from .evaluation_failures import failure_words
from .evaluation_fanout import WORDS_KEPT, fan_out_evaluation, fans_out
from .evaluation_progress import Stopped, reported
from .permissions import OPERATOR, check_may_cancel_evaluation
from .queue import EVALUATE, send_on_commit

log = logging.getLogger(__name__)



def queue_evaluation(*, version: TokenizerVersion, corpus: Corpus) -> Evaluation:
    """Queue (or re-queue, when it failed) the evaluation of a version on a corpus."""
    evaluation, created = Evaluation.objects.get_or_create(version=version, corpus=corpus)
    if created or evaluation.retry():
        send_on_commit(EVALUATE, evaluation.pk)
    return evaluation


def evaluate_everything_on(*, corpus: Corpus) -> list[Evaluation]:
    """Queue the evaluation of every ready version on ``corpus`` (an evaluation corpus now).
    Idempotent: a version already evaluated on it (queued, running or done) keeps its one
    evaluation; a failed one is queued again. Returns the evaluations queued now."""
    kept = Evaluation.objects.filter(corpus=corpus).exclude(
        status__in=Evaluation.ENDED_WITHOUT_METRICS)
    versions = TokenizerVersion.objects.ready().exclude(pk__in=kept.values("version_id"))
    return [queue_evaluation(version=version, corpus=corpus)
            for version in versions.order_by("pk")]


def request_evaluation(*, version: TokenizerVersion, corpus: Corpus) -> Evaluation:
    """The evaluation of ``version`` on the evaluation corpus ``corpus``: the existing one (a
    failed one is queued again), or one queued now. A corpus that is not an evaluation corpus,
    or a version not ready, is refused (``Invalid``), so every number on the leaderboard was
    computed on a corpus everyone compares on."""
    if not corpus.is_evaluation:
        raise Invalid(f"{corpus.name!r} is not an evaluation corpus: mark it as one on its page "
                      f"(every ready version is then evaluated on it)", field="corpus")
    if version.status != TokenizerVersion.Status.READY:
        raise Invalid(f"version {version.label} is {version.status}, not ready: only a ready "
                      f"version is evaluated", field="version")
    return queue_evaluation(version=version, corpus=corpus)


def cancel_evaluation(*, evaluation: Evaluation, user=OPERATOR) -> Evaluation:
    """Cancel a queued or running evaluation: at once when queued; a worker evaluating it stops
    within about a second (``evaluation_progress``), and its parts and merge do nothing. Its
    tokenizer's owner, the corpus's uploader or staff may (``Forbidden`` otherwise); an
    evaluation that has ended is left as it is. Evaluating it again queues it anew."""
    check_may_cancel_evaluation(user, evaluation)
    if evaluation.cancel():
        log.info("evaluation %s cancelled", evaluation.pk)
    else:
        evaluation.refresh_from_db()
    return evaluation


def run_evaluation(*, evaluation_id: int) -> None:
    """Compute a queued evaluation (the task body); a duplicate delivery does nothing."""
    evaluation = Evaluation.objects.claim(evaluation_id)
    if evaluation is not None:
        with beating(evaluation):
            _compute(evaluation, fan_out=True)


@contextmanager
def beating(evaluation: Evaluation):
    """A heartbeat for the evaluation while it is computed (as a run's attempt has): the reaper
    takes back an evaluation whose worker died within ``EVALUATION_STALE_SECONDS``, and never one
    whose worker is alive, however long it takes."""
    heartbeat = Heartbeat(f"evaluation {evaluation.pk}", evaluation.owned)
    heartbeat.start_unless_in_transaction()
    try:
        yield
    finally:
        heartbeat.stop()


def reap_evaluations(*, stale_seconds: int | None = None) -> list[int]:
    """Queue again the running evaluations whose heartbeat is older than ``stale_seconds`` (their
    worker died), and send again those queued whose task was sent more than
    ``EVALUATION_RESEND_SECONDS`` ago (it may be lost; a second delivery does nothing). Returns
    their ids."""
    stale_seconds = settings.EVALUATION_STALE_SECONDS if stale_seconds is None else stale_seconds
    now = timezone.now()
    cutoff = now - timedelta(seconds=stale_seconds)
    sent = []
    for evaluation in Evaluation.objects.stale(cutoff):
        if evaluation.requeue_if_stale(cutoff, settings.EVALUATION_MAX_ATTEMPTS):
            send_on_commit(EVALUATE, evaluation.pk)
            sent.append(evaluation.pk)
    waited = now - timedelta(seconds=settings.EVALUATION_RESEND_SECONDS)
    for evaluation in Evaluation.objects.waiting_since(waited):
        if evaluation.mark_resent():
            send_on_commit(EVALUATE, evaluation.pk)
            sent.append(evaluation.pk)
    return sent


def evaluate_version(*, version: TokenizerVersion, corpus: Corpus) -> Evaluation:
    """Evaluate a version on a corpus now, in this process, and store the result."""
    evaluation, _ = Evaluation.objects.get_or_create(version=version, corpus=corpus)
    evaluation.start_here()
    with beating(evaluation):
        return _compute(evaluation)


def read_limit() -> int:
    """Bytes an evaluation reads of its corpus: all of them, unless ``EVALUATION_MAX_BYTES``
    (an opt-in cap) is set."""
    return settings.EVALUATION_MAX_BYTES or 1 << 62


def mark_capped(metrics: dict, corpus: Corpus) -> None:
    """Note in the metrics that only the first ``EVALUATION_MAX_BYTES`` of a larger corpus were
    read (``first_megabytes``: the pages and the API say "first N MB")."""
    cap = settings.EVALUATION_MAX_BYTES
    if cap and corpus.size_bytes > cap:
        megabytes = float(f"{cap / 1024**2:.3g}")  # 16, 1.5, 0.00391
        metrics["first_megabytes"] = int(megabytes) if megabytes.is_integer() else megabytes


def _compute(evaluation: Evaluation, fan_out: bool = False) -> Evaluation:
    """The metrics, and the tokens of the corpus's most frequent words (for the compare page);
    ``fan_out``: a corpus above ``FANOUT_MIN_BYTES`` is evaluated in parts by other tasks
    (``evaluation_fanout``), and this one returns once they are sent."""
    store, name = get_store(), evaluation.corpus.object_name
    most = read_limit()
    try:
        tokenizer = evaluation.version.load_tokenizer()
        if fan_out and fans_out(evaluation) and fan_out_evaluation(evaluation, tokenizer):
            return evaluation
        totals, frequent = totals_and_words(  # one pass: the words counted on the way
            tokenizer, reported(read_lines(store.open(name), most), evaluation.owned))
        metrics = metrics_of_totals(tokenizer, totals)
        mark_capped(metrics, evaluation.corpus)
        words = ranked_word_tokens(tokenizer, frequent, top=WORDS_KEPT)
    except Stopped:  # cancelled, or queued again: the row says so already
        log.info("evaluation %s stopped: cancelled or queued again", evaluation.pk)
        evaluation.refresh_from_db()
    except Exception as exc:  # stored on the row, in words (``failure_words``)
        if isinstance(exc, (StoreUnavailable, Unencodable, EngineFailed, OSError)):
            log.warning("evaluation %s failed: %s", evaluation.pk, exc)
        else:  # the log has the traceback
            log.exception("evaluation %s failed", evaluation.pk)
        evaluation.record(error=failure_words(evaluation, exc))
    except BaseException as exc:  # a library's panic: in words here, never out of the task
        if not is_library_panic(exc):  # (it does not pickle: the worker's pool would lose it)
            raise
        log.error("evaluation %s failed: the library panicked: %s", evaluation.pk, exc)
        evaluation.record(error=panic_words(exc, "this evaluation, on the corpus's text"))
    else:
        evaluation.record(metrics=metrics, word_tokens=[list(word) for word in words])
    return evaluation
