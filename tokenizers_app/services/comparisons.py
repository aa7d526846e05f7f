"""Comparisons: every metric of two or more versions on one evaluation corpus, with the best
value of each metric marked. The compare page, ``GET /api/compare`` and ``manage.py compare``
all read this one comparison.

The rule for the corpus: an evaluation corpus (the ones every new version is evaluated on); any
other corpus is refused by name, so the numbers compared were all computed the same way.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..bpe.metrics import METRICS, best_value
from ..errors import Invalid
from ..models import Corpus, Evaluation, TokenizerVersion


@dataclass(frozen=True)
class MetricRow:
    """One metric across the compared versions: each one's value (None: no result yet) and
    whether it is the best (ties are all best; nothing is best while fewer than two are known).
    """

    name: str
    label: str
    unit: str
    higher_is_better: bool
    values: list[float | None]
    # computed, and undefined there ("n/a": byte fallback on ASCII text), or not defined for
    # the version's kind (the unknown rate of byte-level BPE, which has no unknown token)
    undefined: list[bool]
    best: list[bool]
    reported: bool  # some version reports it, or some has no result yet


@dataclass(frozen=True)
class Comparison:
    corpus: Corpus
    versions: list[TokenizerVersion]
    evaluations: list[Evaluation | None]  # per version; None: never queued on this corpus
    rows: list[MetricRow]  # one per metric of ``METRICS``, in its order

    @property
    def columns(self) -> list[tuple[TokenizerVersion, Evaluation | None]]:
        return list(zip(self.versions, self.evaluations))


def evaluation_corpus(name: str) -> Corpus:
    """The evaluation corpus named ``name``: an unknown name is not found, a corpus that is not
    an evaluation corpus is refused (``field="corpus"``)."""
    [corpus] = Corpus.objects.by_names([name])
    if not corpus.is_evaluation:
        known = ", ".join(Corpus.objects.for_evaluation().order_by("name")
                          .values_list("name", flat=True)[:20])
        raise Invalid(f"{name!r} is not an evaluation corpus (evaluation corpora: "
                      f"{known or 'none'}); mark it as one on its page to compare versions "
                      f"on it", field="corpus")
    return corpus


def compare_versions(*, versions: list[TokenizerVersion], corpus: Corpus) -> Comparison:
    """The comparison of ``versions`` (in their order) on ``corpus``, from their stored
    evaluations (nothing is computed here)."""
    found = Evaluation.objects.of(versions, corpus)
    evaluations = [found.get(version.pk) for version in versions]
    return Comparison(corpus=corpus, versions=list(versions), evaluations=evaluations,
                      rows=[_row(name, evaluations) for name in METRICS])


def _row(name: str, evaluations: list[Evaluation | None]) -> MetricRow:
    label, unit, higher_is_better = METRICS[name]
    done = [e is not None and e.status == Evaluation.Status.SUCCEEDED for e in evaluations]
    values = [e.metrics.get(name) if ok else None for e, ok in zip(evaluations, done)]
    best = best_value(name, values)
    return MetricRow(name=name, label=label, unit=unit, higher_is_better=higher_is_better,
                     values=values, best=[v is not None and v == best for v in values],
                     undefined=[ok and e.metrics.get(name) is None
                                for e, ok in zip(evaluations, done)],
                     reported=any(ok and name in e.metrics for e, ok in zip(evaluations, done))
                     or not all(done))
