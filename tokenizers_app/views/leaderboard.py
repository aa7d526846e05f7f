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
    boards = [(corpus, ranked(list(rows), sort))
              for corpus, rows in groupby(Evaluation.objects.leaderboard(), lambda e: e.corpus)]
    return render(request, "tokenizers_app/leaderboard.html", {
        "boards": boards, "sort": sort, "columns": COLUMNS,
        "runs": TrainingRun.objects.active().select_related("tokenizer")[:20],
        "my_runs": TrainingRun.objects.started_by(request.user).select_related("tokenizer")[:5],
        "tokenizers": Tokenizer.objects.with_latest().order_by("name")[:200]})


def ranked(evaluations: list, key: str) -> list:
    """Best first by ``key`` (lower first for tokens per word); ties by name and number."""
    higher_better = COLUMNS[key][2]
    return sorted(evaluations, key=lambda e: (
        -e.metrics.get(key, 0) if higher_better else e.metrics.get(key, 0),
        e.version.tokenizer.name, e.version.number))
