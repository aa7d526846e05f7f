"""Training runs: one row per job, whose state the workers keep up to date, and the byte ranges
of a fanned-out count. Each change of a run's state is one guarded UPDATE here, so that two
attempts, the reaper and a cancel never overwrite each other."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Case, F, Q, Value, When
from django.utils import timezone

from tokenizers_app.engines.registry import (DEFAULT_KIND, TokenizerKind, kind_choices, kind_named,
                                             trained_kind_choices)

from ..bpe.parameters import TrainingParameters
from .corpora import Corpus
from .parts import RangePart


# The kinds of tokenizer, one enum derived from the registry (``engines.registry.KINDS``):
# ``Kind.<NAME>`` is a kind's stored name. The fields' choices are the registry's own
# functions, read each time they are asked, so a kind registered later is a choice too.
Kind = models.TextChoices("Kind", [(name.upper(), (name, label)) for name, label in kind_choices()])


class RunQuerySet(models.QuerySet):
    def active(self):
        """Runs not finished yet (queued or running)."""
        return self.exclude(status__in=TrainingRun.FINISHED)

    def without_versions(self):
        """Runs that made no version (yet): queued, running, cancelled or failed ones, and
        those whose versions are gone."""
        return self.filter(versions=None, built_versions=None)

    def started_by(self, user):
        """``user``'s runs, the latest first (none for an anonymous visitor)."""
        if not user.is_authenticated:
            return self.none()
        return self.filter(created_by=user).order_by("-created_at", "-pk")

    def stale(self, cutoff):
        """Running runs whose last heartbeat is older than ``cutoff``."""
        return self.filter(status=TrainingRun.Status.RUNNING, heartbeat_at__lt=cutoff)

    def waiting_since(self, cutoff):
        """Queued runs sent (or resent) before ``cutoff``: their task may be lost."""
        return self.filter(status=TrainingRun.Status.QUEUED, heartbeat_at__lt=cutoff)

    def claim(self, run_id: int, total_bytes: int) -> TrainingRun | None:
        """Move a queued run to running as its next attempt (stage ``count`` over
        ``total_bytes``); None when it is not queued (finished, cancelled, or taken by another
        delivery of the same task)."""
        now = timezone.now()
        claimed = self.filter(pk=run_id, status=TrainingRun.Status.QUEUED).update(
            status=TrainingRun.Status.RUNNING, attempt=F("attempt") + 1, heartbeat_at=now,
            started_at=now, stage=TrainingRun.Stage.COUNT, progress_done=0,
            progress_total=total_bytes, merges_per_second=None, stage_seconds={}, error="",
            fanout_parts=0)
        return self.select_related("tokenizer").get(pk=run_id) if claimed else None


class TrainingRun(models.Model):
    """One training job. Its state lives here; workers update it at least once a second."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        SUCCEEDED = "succeeded"
        FAILED = "failed"
        CANCELLED = "cancelled"

    class Stage(models.TextChoices):
        COUNT = "count"
        MERGE = "merge"
        SAVE = "save"

    FINISHED = (Status.SUCCEEDED, Status.FAILED, Status.CANCELLED)

    tokenizer = models.ForeignKey("Tokenizer", on_delete=models.PROTECT, related_name="runs")
    corpora = models.ManyToManyField(Corpus, related_name="runs")
    corpus_weights = models.JSONField(
        default=dict, blank=True,
        help_text='corpus name -> weight, e.g. {"de": 2}: its counts are multiplied before '
                  'merging (a corpus not listed weighs 1)')
    algorithm = models.CharField(max_length=20, choices=trained_kind_choices,
                                 default=DEFAULT_KIND)
    parameters = models.JSONField(
        help_text="the checked training parameters, whole (bpe.parameters.TrainingParameters "
                  "as_json): vocab_size, special_tokens, pattern (byte_bpe's regex), "
                  "min_frequency, sweep, algorithm, and char_bpe's lowercase, split and "
                  "min_word_frequency")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED,
                              db_index=True)
    stage = models.CharField(max_length=10, choices=Stage.choices, blank=True)
    progress_done = models.BigIntegerField(default=0)
    progress_total = models.BigIntegerField(default=0)
    merges_per_second = models.FloatField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    attempt = models.PositiveIntegerField(default=0)
    cancel_requested = models.BooleanField(default=False)
    error = models.TextField(blank=True)
    stage_seconds = models.JSONField(default=dict, blank=True)
    fanout_parts = models.PositiveIntegerField(default=0,
                                               help_text="count tasks (0: counted in one task)")
    core_path = models.CharField(
        max_length=200, blank=True,
        help_text='the BPE core that ran the merges (bpe.compiled.CORE_PATH: "compiled '
                  '(Cython)" or "pure Python (...)"); "" until it has finished')
    stop_reason = models.TextField(blank=True, help_text=(
        'why the run made fewer merges than asked ("" when it made them all, or is not done)'))
    larger_reason = models.TextField(blank=True, help_text=(
        "why a character-level run's version is larger than the vocab size asked for (its "
        'whole alphabet is always kept), "" when it is not'))
    unsent = models.BooleanField(default=False, help_text=(
        "sending the run's task failed (the queue did not answer): the reaper sends it again"))
    extends = models.ForeignKey("TokenizerVersion", null=True, blank=True,
                                on_delete=models.PROTECT, related_name="extension_runs",
                                help_text="an extension run: the parent version whose merges it "
                                          "continues (every parent id kept)")
    versions = models.ManyToManyField("TokenizerVersion", blank=True, related_name="runs",
                                      help_text="the versions this run resulted in")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = RunQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"run {self.pk} ({self.tokenizer_id and self.tokenizer.name}, {self.status})"

    def weight_of(self, corpus) -> int:
        """The weight of one of this run's corpora (a Corpus or a name): 1 unless given."""
        return int(self.corpus_weights.get(getattr(corpus, "name", corpus), 1))

    def weights_for(self, corpora) -> list[int] | None:
        """The weights of ``corpora`` in their order, or None when every one weighs 1."""
        weights = [self.weight_of(corpus) for corpus in corpora]
        return weights if any(weight != 1 for weight in weights) else None

    @property
    def is_finished(self) -> bool:
        return self.status in self.FINISHED

    @property
    def kind(self) -> TokenizerKind:
        """The kind this run trains or extends (``engines.registry``): how it counts, trains
        and extends."""
        return kind_named(self.algorithm)

    @property
    def params(self) -> TrainingParameters:
        """The run's checked parameters, whole, as the trainers take them."""
        return TrainingParameters.from_json(self.parameters)

    @property
    def vocab_size(self) -> int:
        return self.parameters["vocab_size"]

    @property
    def special_tokens(self) -> list[str]:
        return list(self.parameters["special_tokens"])

    @property
    def min_frequency(self) -> int:
        return self.parameters["min_frequency"]

    @property
    def pattern(self) -> str:
        """Byte-level BPE's pre-tokenizing regex ("" for character-level BPE)."""
        return self.parameters["pattern"]

    @property
    def sweep(self) -> list[int]:
        return list(self.parameters.get("sweep", []))

    @property
    def char_options(self) -> dict:
        """Character-level BPE's ``lowercase``, ``split`` and ``min_word_frequency`` (empty for
        byte-level BPE)."""
        if not self.kind.has_alphabet:  # its words: split, case, least frequency
            return {}
        return {key: self.parameters[key] for key in ("lowercase", "split",
                                                      "min_word_frequency")}

    @property
    def queue_was_down(self) -> bool:
        """Whether sending the run's task failed (the queue did not answer): the reaper sends it
        again later."""
        return self.unsent

    def seconds_left(self) -> float | None:
        """About how long the merge stage still takes, from its merges per second."""
        if self.stage != self.Stage.MERGE or not self.merges_per_second:
            return None
        return max(0.0, (self.progress_total - self.progress_done) / self.merges_per_second)

    def total_seconds(self) -> float | None:
        """From the start of the last attempt to the end."""
        if self.started_at is None or self.finished_at is None:
            return None
        return (self.finished_at - self.started_at).total_seconds()

    def owned(self, attempt: int):
        """This run as a queryset, while ``attempt`` still owns it (running, same attempt)."""
        return TrainingRun.objects.filter(pk=self.pk, attempt=attempt,
                                          status=self.Status.RUNNING)

    def finish(self, status: str, error: str = "", **fields) -> bool:
        """End this run's current attempt with ``status`` (and the fields given), if the attempt
        still owns it."""
        now = timezone.now()
        return bool(self.owned(self.attempt).update(status=status, error=error, finished_at=now,
                                                    heartbeat_at=now, **fields))

    def request_cancel(self) -> None:
        """Cancel: a queued run at once; a running one is flagged, and its worker stops within a
        second. One UPDATE, so that a run the reaper moves between queued and running is never
        missed."""
        queued = Q(status=self.Status.QUEUED)
        TrainingRun.objects.filter(pk=self.pk, status__in=[self.Status.QUEUED,
                                                           self.Status.RUNNING]).update(
            cancel_requested=True,
            status=Case(When(queued, then=Value(self.Status.CANCELLED)), default=F("status")),
            finished_at=Case(When(queued, then=Value(timezone.now())), default=F("finished_at")))
        self.refresh_from_db()

    def requeue(self) -> bool:
        """Queue this run again for a new attempt (its worker went silent)."""
        return bool(self.owned(self.attempt).update(status=self.Status.QUEUED, stage="",
                                                    heartbeat_at=timezone.now()))

    def mark_unsent(self) -> None:
        """Note that the run's task could not be sent (the queue did not answer)."""
        self.unsent = True
        TrainingRun.objects.filter(pk=self.pk).update(unsent=True)

    def mark_resent(self) -> bool:
        """Note that a queued run's task is sent again; False when it is no longer queued."""
        return bool(TrainingRun.objects.filter(pk=self.pk, status=self.Status.QUEUED)
                    .update(heartbeat_at=timezone.now()))


class CountPart(RangePart):
    """One byte range of a corpus counted by one task when counting fans out."""

    run = models.ForeignKey(TrainingRun, on_delete=models.CASCADE, related_name="count_parts")
    corpus = models.ForeignKey(Corpus, on_delete=models.CASCADE, related_name="+")
    counts_file = models.CharField(max_length=255, blank=True)  # a name in the store

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "attempt", "index"],
                                               name="count_part_unique_index")]

    def mark_done(self, worker: str, counts_file: str) -> bool:
        """Record this part as counted (its counts in ``counts_file``, a name in the store);
        False when a duplicate delivery did so first."""
        return self.mark_stored(worker, counts_file=counts_file)
