"""The byte range of a corpus that one task handles when a job fans out: what a count part
(``runs.CountPart``) and an evaluation part (``evaluations.EvaluationPart``) share."""

from __future__ import annotations

from django.db import models


class RangePart(models.Model):
    """One byte range ``start``..``end`` of a corpus, part ``index`` of the job's ``attempt``;
    ``done`` once a worker stored its result. A part of bytes 100..250 has ``size`` 150."""

    attempt = models.PositiveIntegerField()
    index = models.PositiveIntegerField()
    start = models.BigIntegerField()
    end = models.BigIntegerField()
    done = models.BooleanField(default=False)
    worker = models.CharField(max_length=200, blank=True)

    class Meta:
        abstract = True

    @property
    def size(self) -> int:
        return self.end - self.start

    def mark_stored(self, worker: str, **stored_file: str) -> bool:
        """Record this part as done by ``worker``, with its result's file, e.g.
        ``mark_stored("w1", counts_file="counts/7.bin")``; False when a duplicate delivery did
        so first (one guarded UPDATE)."""
        return bool(type(self).objects.filter(pk=self.pk, done=False).update(
            done=True, worker=worker[:200], **stored_file))
