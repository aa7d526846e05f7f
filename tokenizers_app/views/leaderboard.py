"""``/``: versions ranked per evaluation corpus, and the runs in progress."""

from itertools import groupby

from django.shortcuts import render

from ..bpe.metrics import HEADLINE_METRICS, METRICS
from ..models import Evaluation, Tokenizer, TrainingRun
from .access import readable

COLUMNS = {name: METRICS[name] for name in HEADLINE_METRICS}


@readable
def index(request):
    sort = request.GET.get("sort")
    sort = sort if sort in COLUMNS else "compression_ratio"
    boards = [(corpus, *ranked(list(rows), sort))
              for corpus, rows in groupby(Evaluation.objects.leaderboard(), lambda e: e.corpus)]
    return render(request, "tokenizers_app/leaderboard.html", {
        "boards": boards, "sort": sort, "columns": COLUMNS,
        "runs": TrainingRun.objects.active().select_related("tokenizer")[:20],
        "tokenizers": Tokenizer.objects.with_latest().order_by("name")[:200]})


def ranked(evaluations: list, key: str) -> tuple[list, list]:
    """``(done, computing)``: the succeeded evaluations best first by ``key`` (lower first for
    tokens per word; no value last; ties by name and number), and those still to come."""
    higher_better = COLUMNS[key][2]

    def order(e):
        value = e.metrics.get(key)
        return (value is None, 0 if value is None else -value if higher_better else value,
                e.version.tokenizer.name, e.version.number)
    done = [e for e in evaluations if e.status == Evaluation.Status.SUCCEEDED]
    return sorted(done, key=order), [e for e in evaluations if e not in done]
