"""Evaluations: the metrics of one version on one corpus, computed by a task. Each change of an
evaluation's state is one guarded UPDATE, so that a late result never overwrites a requeue."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from .corpora import Corpus
from .parts import RangePart
from .versions import TokenizerVersion


class EvaluationQuerySet(models.QuerySet):
    def claim(self, evaluation_id: int) -> Evaluation | None:
        """Move a queued evaluation to running; None when it is not queued (done, or taken by
        another delivery of the same task)."""
        now = timezone.now()
        claimed = self.filter(pk=evaluation_id, status=Evaluation.Status.QUEUED).update(
            status=Evaluation.Status.RUNNING, started_at=now, heartbeat_at=now, bytes_done=0,
            attempts=models.F("attempts") + 1)
        return self.select_related("version", "corpus").get(pk=evaluation_id) if claimed else None

    def waiting_since(self, cutoff):
        """Queued evaluations sent (or resent) before ``cutoff``: their task may be lost (the
        broker was down when they were queued, say)."""
        return self.filter(status=Evaluation.Status.QUEUED, sent_at__lt=cutoff)

    def without_word_tokens(self):
        """Leave out the large list of word tokens (only the compare page reads it)."""
        return self.defer("word_tokens")

    def succeeded(self):
        return self.filter(status=Evaluation.Status.SUCCEEDED)

    def of(self, versions, corpus) -> dict[int, Evaluation]:
        """The evaluations of these versions on one corpus, by version id (those that exist)."""
        found = self.filter(version__in=list(versions), corpus=corpus).select_related("corpus")
        return {evaluation.version_id: evaluation for evaluation in found}

    def leaderboard(self):
        """The evaluations on the current evaluation corpora, succeeded or still to come (queued,
        running), best compression ratio first per corpus (those to come last), with their
        version, tokenizer and corpus. The languages of parallel sets are on their sets' pages."""
        return (self.filter(corpus__is_evaluation=True, corpus__parallel_members__isnull=True)
                .exclude(status__in=Evaluation.ENDED_WITHOUT_METRICS)
                .without_word_tokens()
                .select_related("version__tokenizer", "corpus")
                .order_by("corpus__name", models.F("compression_ratio").desc(nulls_last=True),
                          "version__tokenizer__name",
                          "version__number"))

    def stale(self, cutoff):
        """Running evaluations whose last heartbeat is older than ``cutoff``: their worker died
        (one without a heartbeat, from before evaluations had one: running since then)."""
        silent = (models.Q(heartbeat_at__lt=cutoff)
                  | models.Q(heartbeat_at__isnull=True, started_at__lt=cutoff))
        return self.filter(silent, status=Evaluation.Status.RUNNING)


class Evaluation(models.Model):
    """The metrics of one version on one corpus (``tokenizers_app.bpe.evaluation``)."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"
        CANCELLED = "cancelled"

    ENDED_WITHOUT_METRICS = (Status.FAILED, Status.CANCELLED)  # evaluated again on request

    version = models.ForeignKey(TokenizerVersion, on_delete=models.CASCADE,
                                related_name="evaluations")
    corpus = models.ForeignKey(Corpus, on_delete=models.CASCADE, related_name="evaluations")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    metrics = models.JSONField(default=dict, blank=True)
    word_tokens = models.JSONField(default=list, blank=True, editable=False,
                                   help_text="[word, count, ids] of the corpus's most frequent "
                                             "words, for comparing how versions cut them")
    compression_ratio = models.FloatField(null=True, blank=True, editable=False,
                                          help_text="bytes/token, copied from the metrics "
                                                    "for sorting")
    error = models.TextField(blank=True)
    fanout_parts = models.PositiveIntegerField(default=0, editable=False,
                                               help_text="byte ranges evaluated by separate "
                                                         "tasks (0: one task)")
    bytes_done = models.BigIntegerField(default=0, editable=False,
                                        help_text="bytes of the corpus evaluated so far by the "
                                                  "current attempt (its parts' sum in parts)")
    attempts = models.PositiveSmallIntegerField(default=0, editable=False,
                                                help_text="times a worker started it since it "
                                                          "was queued anew")
    created_at = models.DateTimeField(default=timezone.now)
    sent_at = models.DateTimeField(default=timezone.now, help_text="when its task was last sent")
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True, editable=False,
                                        help_text="written while a worker computes it")
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = EvaluationQuerySet.as_manager()

    def __str__(self) -> str:
        """``prose-bpe@2 on held-out``"""
        return f"{self.version.label} on {self.corpus.name}"

    class Meta:
        constraints = [models.UniqueConstraint(fields=["version", "corpus"],
                                               name="evaluation_unique_pair")]

    @property
    def bytes_total(self) -> int:
        """The bytes this evaluation reads: its corpus, or the opt-in cap's first bytes."""
        cap = settings.EVALUATION_MAX_BYTES
        size = self.corpus.size_bytes
        return min(size, cap) if cap else size

    @property
    def progress(self) -> dict | None:
        """A running evaluation's progress: ``{"bytes_done", "bytes", "parts_done", "parts",
        "seconds_left"}`` (parts 0 when it runs in one task; ``seconds_left`` None until a
        rate is known: two seconds and some bytes in); None when it is not running."""
        if self.status != self.Status.RUNNING:
            return None
        total = self.bytes_total
        done = min(self.bytes_done, total)
        parts = (list(self.parts.filter(attempt=self.attempts).values_list("done", flat=True))
                 if self.fanout_parts else [])
        elapsed = (timezone.now() - self.started_at).total_seconds() if self.started_at else 0
        left = (round(elapsed * (total - done) / done) if done and elapsed >= 2 else None)
        return {"bytes_done": done, "bytes": total, "parts_done": sum(parts),
                "parts": len(parts), "seconds_left": left}

    def cancel(self) -> bool:
        """Cancel this evaluation while it is queued or running (one guarded UPDATE): its
        task, its parts' tasks and its merge then do nothing, and a worker evaluating it stops
        at its next progress report (``services.evaluation_progress``). False when it had
        ended already."""
        fields = {"status": self.Status.CANCELLED, "finished_at": timezone.now(), "error": ""}
        cancelled = Evaluation.objects.filter(
            pk=self.pk, status__in=[self.Status.QUEUED, self.Status.RUNNING]).update(**fields)
        if cancelled:
            for name, value in fields.items():
                setattr(self, name, value)
        return bool(cancelled)

    def retry(self) -> bool:
        """Queue a failed or cancelled evaluation again; False when it had not ended so."""
        fields = {"status": self.Status.QUEUED, "error": "", "sent_at": timezone.now(),
                  "attempts": 0, "bytes_done": 0}
        retried = Evaluation.objects.filter(
            pk=self.pk, status__in=self.ENDED_WITHOUT_METRICS).update(**fields)
        if retried:
            for name, value in fields.items():
                setattr(self, name, value)
        return bool(retried)

    def start_here(self) -> None:
        """Mark this evaluation running in this process (computed now, not by a task)."""
        self.status, self.started_at = self.Status.RUNNING, timezone.now()
        self.heartbeat_at = self.started_at
        self.bytes_done = 0
        Evaluation.objects.filter(pk=self.pk).update(status=self.status, bytes_done=0,
                                                     started_at=self.started_at,
                                                     heartbeat_at=self.heartbeat_at,
                                                     attempts=models.F("attempts") + 1)

    def owned(self) -> models.QuerySet:
        """This evaluation, while the attempt that started at ``started_at`` still runs it (the
        reaper has not queued it again)."""
        return Evaluation.objects.filter(pk=self.pk, status=self.Status.RUNNING,
                                         started_at=self.started_at)

    def requeue_if_stale(self, cutoff, most_attempts: int = 3) -> bool:
        """Queue this evaluation again if it is still running since before ``cutoff`` (its
        worker died) and was started fewer than ``most_attempts`` times; past them it fails, in
        words, and is not tried again (a file that kills every worker that tries it)."""
        stale = Evaluation.objects.stale(cutoff).filter(pk=self.pk)
        stale.filter(attempts__gte=most_attempts).update(
            status=self.Status.FAILED, finished_at=timezone.now(),
            error=f"the worker evaluating it died in each of its {self.attempts} attempts (its "
                  f"tokenizer or corpus may exhaust a worker's memory or crash it); it is not "
                  f"tried again (EVALUATION_MAX_ATTEMPTS {most_attempts}): evaluate it again "
                  f"on request once the cause is fixed")
        return bool(stale.filter(attempts__lt=most_attempts)
                    .update(status=self.Status.QUEUED, sent_at=timezone.now()))

    def mark_resent(self) -> bool:
        """Note that a queued evaluation's task is sent again; False when no longer queued."""
        return bool(Evaluation.objects.filter(pk=self.pk, status=self.Status.QUEUED)
                    .update(sent_at=timezone.now()))

    def record(self, metrics: dict | None = None, error: str = "",
               word_tokens: list | None = None) -> bool:
        """Store the outcome of the attempt that started at ``started_at``: ``metrics``, or the
        ``error`` it failed with. Guarded: False (nothing written) when the reaper queued the
        evaluation again meanwhile, so a late result never overwrites a requeue."""
        status = self.Status.FAILED if error else self.Status.SUCCEEDED
        metrics = metrics or {}
        fields = {"status": status, "metrics": metrics, "error": error,
                  "compression_ratio": metrics.get("compression_ratio"),
                  "word_tokens": word_tokens or [],
                  "finished_at": timezone.now()}
        written = self.owned().update(**fields)
        if written:
            for name, value in fields.items():
                setattr(self, name, value)
        return bool(written)


class EvaluationPart(RangePart):
    """One byte range of a corpus evaluated by one task when an evaluation fans out (its corpus
    is above ``FANOUT_MIN_BYTES``): its totals (``bpe.eval_totals.EvalTotals``) are stored in
    ``totals_file``, then merged. ``attempt`` is the evaluation's ``attempts`` when it fanned
    out: a later attempt's parts are its own (a part done before is carried over, not redone)."""

    evaluation = models.ForeignKey(Evaluation, on_delete=models.CASCADE, related_name="parts")
    totals_file = models.CharField(max_length=255, blank=True)  # a name in the store

    class Meta:
        constraints = [models.UniqueConstraint(fields=["evaluation", "attempt", "index"],
                                               name="evaluation_part_unique_index")]

    def mark_done(self, worker: str, totals_file: str) -> bool:
        """Record this part as evaluated; False when a duplicate delivery did so first."""
        return self.mark_stored(worker, totals_file=totals_file)
