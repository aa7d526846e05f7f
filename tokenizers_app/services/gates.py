"""Gates on aliases, and golden encodings.

A golden is a text pinned on a tokenizer with the ids a chosen version gives it. A gate (staff
set it, per alias) refuses a move of the alias unless the new target
- is identical to, or extends, the alias's current version (``bpe/diff.py``'s verdicts),
- keeps every golden of the tokenizer (gives each golden text the pinned ids),
- is no worse on any headline metric, on any evaluation corpus where both are evaluated, than
  the current target by more than the gate's tolerance (a share: 0.01 is 1%); the target must
  be evaluated on every evaluation corpus the current target is.

A refused move is a ``GateRefused`` (409) naming each failed check; staff may force it with a
written reason, and the alias history (``AliasMove``) records the checks and the reason.
"""

from __future__ import annotations

from ..bpe.metric_text import metric_text
from ..bpe.metrics import HEADLINE_METRICS, METRICS
from ..errors import Conflict, Invalid, NotFound
from ..models import Alias, Evaluation, GoldenEncoding, TokenizerVersion
from .diffs import diff_versions
from .permissions import check_may_add_version, check_staff, recorded

MAX_GOLDEN_CHARS = 10_000


class GateRefused(Conflict):
    """A gated alias move that failed checks (409); ``checks`` holds every check."""

    def __init__(self, message: str, *, checks: list[dict]):
        super().__init__(message, field="alias")
        self.checks = checks


def pin_golden(*, version: TokenizerVersion, text: str, user) -> GoldenEncoding:
    """Pin ``text`` with the ids ``version`` gives it: the tokenizer's owner or staff."""
    check_may_add_version(user, version.tokenizer)
    if not isinstance(text, str) or not text or len(text) > MAX_GOLDEN_CHARS:
        raise Invalid(f"a golden text holds 1 to {MAX_GOLDEN_CHARS:,} characters", field="text")
    ids = list(version.cached_tokenizer().encode_ordinary(text))
    return GoldenEncoding.objects.create(tokenizer=version.tokenizer, text=text, ids=ids,
                                         pinned_from=version, created_by=recorded(user))


def goldens_kept(version: TokenizerVersion) -> list[tuple[GoldenEncoding, bool]]:
    """Each golden of the version's tokenizer, and whether the version gives it the pinned ids."""
    goldens = list(version.tokenizer.goldens.select_related("pinned_from"))
    if not goldens:
        return []
    encode = version.cached_tokenizer().encode_ordinary
    return [(golden, list(encode(golden.text)) == golden.ids) for golden in goldens]


def set_gate(*, alias: Alias, tolerance: float | None, user) -> Alias:
    """Gate the alias with a metric tolerance (a share, 0 to 1), or lift the gate (None)."""
    check_staff(user, "set alias gates")
    if tolerance is not None and not 0 <= float(tolerance) <= 1:
        raise Invalid(f"tolerance {tolerance} is not a share between 0 and 1 (0.01 is 1%)",
                      field="tolerance")
    alias.gate_tolerance = None if tolerance is None else float(tolerance)
    alias.save(update_fields=["gate_tolerance"])
    return alias


def find_alias(*, tokenizer_name: str, name: str) -> Alias:
    alias = Alias.objects.select_related("tokenizer", "version").filter(
        tokenizer__name=tokenizer_name, name=name).first()
    if alias is None:
        raise NotFound(f"{tokenizer_name} has no alias {name!r}: point it at a version first")
    return alias


def gate_checks(*, alias: Alias, target: TokenizerVersion) -> list[dict]:
    """The gate's three checks of moving ``alias`` to ``target``: ``{name, passed, detail}``."""
    current = alias.version
    found = diff_versions(old=current, new=target)
    checks = [{"name": "ids", "passed": found["keeps_ids"], "detail": (
        f"{target.label} {found['verdict'].replace('_', ' ')} {current.label}"
        + ("" if found["keeps_ids"] else f": {found['changed_count']} ids of {current.label} "
                                         f"name other tokens"))}]
    broken = [golden for golden, kept in goldens_kept(target) if not kept]
    checks.append({"name": "goldens", "passed": not broken, "detail": (
        "every golden holds" if not broken else
        f"{len(broken)} golden{'s' if len(broken) > 1 else ''} broken: "
        + "; ".join(repr(g.text[:40]) for g in broken[:5]))})
    worse = worse_metrics(current, target, alias.gate_tolerance or 0.0)
    checks.append({"name": "metrics", "passed": not worse, "detail": (
        f"no headline metric worse by more than {alias.gate_tolerance or 0:.1%}" if not worse
        else "; ".join(worse))})
    return checks


def worse_metrics(current: TokenizerVersion, target: TokenizerVersion,
                  tolerance: float) -> list[str]:
    """The headline metrics on which ``target`` is worse than ``current`` by more than
    ``tolerance`` (a share of the current value), on corpora where both are evaluated."""
    done = Evaluation.objects.filter(status=Evaluation.Status.SUCCEEDED).select_related("corpus")
    mine = {e.corpus_id: e for e in done.filter(version=current)}
    theirs_all = list(done.filter(version=target, corpus_id__in=mine))
    evaluated = {e.corpus_id for e in theirs_all}
    worse = [f"{target.label} is not evaluated on {e.corpus.name} yet"
             for corpus_id, e in sorted(mine.items()) if corpus_id not in evaluated]
    for theirs in theirs_all:
        before, after = mine[theirs.corpus_id].metrics, theirs.metrics
        for name in HEADLINE_METRICS:
            old, new = before.get(name), after.get(name)
            if old is None or new is None:
                continue
            higher_is_better = METRICS[name][2]
            loss = (old - new) if higher_is_better else (new - old)
            if loss > tolerance * abs(old):
                worse.append(f"{METRICS[name][0]} on {theirs.corpus.name}: "
                             f"{metric_text(old, name)} -> {metric_text(new, name)}")
    return worse


def checked_move(*, alias: Alias | None, target: TokenizerVersion,
                 force_reason: str = "") -> tuple[list[dict], str]:
    """The gate's checks for a move (none without a gate), and the reason recorded; raises
    ``GateRefused`` naming each failed check unless ``force_reason`` is given."""
    if alias is None or alias.gate_tolerance is None or alias.version_id == target.pk:
        return [], ""
    checks = gate_checks(alias=alias, target=target)
    failed = [check for check in checks if not check["passed"]]
    reason = (force_reason or "").strip()
    if failed and not reason:
        raise GateRefused(
            f"the gate of {alias} refuses {target.label}: "
            + "; ".join(f"{check['name']}: {check['detail']}" for check in failed)
            + ". Staff may force the move with a written reason", checks=checks)
    return checks, reason if failed else ""

