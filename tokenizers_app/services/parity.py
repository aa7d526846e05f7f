"""The tokenizer premium of versions on a parallel set: per language, the version's tokens on
that language's corpus divided by its tokens on the pivot's (the same lines, aligned), read from
the evaluations every evaluation corpus gets; and the parity spread over the languages.

One function computes the numbers the page, the API and ``manage.py parity`` all show.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from ..models import Evaluation, ParallelSet, TokenizerVersion

WITHIN = 1.5  # the parity spread's share of languages within this premium
NO_SPACES = {"Han", "Hiragana", "Katakana", "Thai", "Lao", "Khmer", "Myanmar", "Tibetan"}


@dataclass
class LanguageScore:
    """One version on one language: its evaluation's numbers, and the premium when both this
    language and the pivot are evaluated."""

    language: str
    status: str  # queued, running, succeeded, failed, or "missing" (never queued)
    tokens: int | None = None
    premium: float | None = None
    compression_ratio: float | None = None
    tokens_per_word: float | None = None
    unknown_rate: float | None = None
    byte_fallback_rate: float | None = None


@dataclass
class VersionParity:
    label: str
    scores: dict[str, LanguageScore] = field(default_factory=dict)
    worst_premium: float | None = None
    worst_language: str | None = None
    median_premium: float | None = None
    share_within: float | None = None  # of the non-pivot languages, premium <= WITHIN

    @property
    def complete(self) -> bool:
        return all(score.premium is not None for score in self.scores.values())


@dataclass
class Parity:
    parallel_set: ParallelSet
    languages: list[str]
    versions: list[VersionParity]
    spaceless: list[str]  # languages written mostly without spaces: tokens per word misleads


def parity(*, parallel_set: ParallelSet, versions=None) -> Parity:
    """The premium table of ``versions`` (default: every version evaluated on the set's pivot,
    or queued to be) on ``parallel_set``."""
    corpora = parallel_set.corpora()
    languages = parallel_set.languages()
    if versions is None:
        versions = TokenizerVersion.objects.filter(
            evaluations__corpus=corpora[parallel_set.pivot]).select_related("tokenizer") \
            .order_by("tokenizer__name", "number")
    versions = list(versions)
    found = Evaluation.objects.without_word_tokens().filter(
        version__in=versions, corpus__in=list(corpora.values()))
    by_pair = {(e.version_id, e.corpus_id): e for e in found}
    rows = [_version_parity(version, languages, parallel_set.pivot, corpora, by_pair)
            for version in versions]
    spaceless = [lang for lang in languages if _mostly(corpora[lang].scripts, NO_SPACES)]
    return Parity(parallel_set=parallel_set, languages=languages, versions=rows,
                  spaceless=spaceless)


def _version_parity(version, languages, pivot, corpora, by_pair) -> VersionParity:
    row = VersionParity(label=version.label)
    for language in languages:
        evaluation = by_pair.get((version.pk, corpora[language].pk))
        row.scores[language] = _score(language, evaluation)
    pivot_tokens = row.scores[pivot].tokens
    for score in row.scores.values():
        if score.tokens is not None and pivot_tokens:
            score.premium = round(score.tokens / pivot_tokens, 4)
    premiums = {lang: s.premium for lang, s in row.scores.items()
                if lang != pivot and s.premium is not None}
    if premiums:
        row.worst_language = max(premiums, key=premiums.__getitem__)
        row.worst_premium = premiums[row.worst_language]
        row.median_premium = round(statistics.median(premiums.values()), 4)
        row.share_within = round(sum(p <= WITHIN for p in premiums.values()) / len(premiums), 4)
    return row


def _score(language: str, evaluation: Evaluation | None) -> LanguageScore:
    if evaluation is None:
        return LanguageScore(language=language, status="missing")
    score = LanguageScore(language=language, status=evaluation.status)
    if evaluation.status == Evaluation.Status.SUCCEEDED:
        metrics = evaluation.metrics
        score.tokens = metrics.get("tokens")
        for name in ("compression_ratio", "tokens_per_word", "unknown_rate",
                     "byte_fallback_rate"):
            setattr(score, name, metrics.get(name))
    return score


def most_different(result: Parity, first: str, second: str, top: int = 5) -> list[tuple]:
    """The languages where two versions' premiums differ most: ``(language, premium of first,
    premium of second, ratio)``, the largest ratio (either way) first."""
    rows = {row.label: row for row in result.versions}
    a, b = rows[first], rows[second]
    pairs = [(lang, a.scores[lang].premium, b.scores[lang].premium) for lang in result.languages
             if a.scores[lang].premium and b.scores[lang].premium]
    scored = [(lang, pa, pb, round(max(pa, pb) / min(pa, pb), 4)) for lang, pa, pb in pairs]
    return sorted(scored, key=lambda item: -item[3])[:top]


def _mostly(scripts: dict, chosen: set) -> bool:
    """``_mostly({"Han": 0.7, "Latin": 0.3}, {"Han"}) -> True``."""
    return sum(share for script, share in scripts.items() if script in chosen) > 0.5


def as_json(result: Parity) -> dict:
    """The numbers as the API and ``manage.py parity`` give them."""
    return {
        "set": result.parallel_set.name, "pivot": result.parallel_set.pivot,
        "languages": result.languages, "within": WITHIN,
        "tokens_per_word_not_meaningful": result.spaceless,
        "versions": [{
            "version": row.label, "worst_premium": row.worst_premium,
            "worst_language": row.worst_language, "median_premium": row.median_premium,
            "share_within": row.share_within,
            "languages": {lang: score.__dict__ for lang, score in row.scores.items()},
        } for row in result.versions]}
