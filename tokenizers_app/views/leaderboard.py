"""``/``: versions ranked per evaluation corpus (by any headline metric, within a vocab-size
range), and the runs in progress; ``/tokenizers/``: every tokenizer, ready or not."""

from itertools import groupby
from urllib.parse import urlencode

from django.shortcuts import render

from ..bpe.metrics import HEADLINE_METRICS, METRICS
from ..forms import VocabRangeForm
from ..models import Evaluation, Tokenizer, TrainingRun
from .access import readable

COLUMNS = {name: METRICS[name] for name in HEADLINE_METRICS}


@readable
def index(request):
    sort = request.GET.get("sort")
    sort = sort if sort in COLUMNS else "compression_ratio"
    vocab = VocabRangeForm(request.GET)
    evaluations = vocab.within(Evaluation.objects.leaderboard().select_related(
        "version__training_run").prefetch_related("version__training_run__corpora"))
    boards = [(corpus, *ranked(list(rows), sort))
              for corpus, rows in groupby(evaluations, lambda e: e.corpus)]
    kept = {k: v for k, v in request.GET.items() if k in vocab.fields and v}
    return render(request, "tokenizers_app/leaderboard.html", {
        "boards": boards, "sort": sort, "columns": COLUMNS, "vocab": vocab,
        "sort_links": {name: "?" + urlencode({"sort": name, **kept}) for name in COLUMNS},
        "runs": TrainingRun.objects.active().select_related("tokenizer")[:20],
        "my_runs": TrainingRun.objects.started_by(request.user).select_related("tokenizer")[:5],
        "tokenizers": Tokenizer.objects.with_latest().filter(ready_versions__gt=0)
                                       .order_by("name")[:200]})


@readable
def tokenizer_list(request):
    """Every tokenizer, those with no ready version too (a cancelled or failed first run)."""
    return render(request, "tokenizers_app/tokenizers.html", {
        "tokenizers": Tokenizer.objects.with_latest().order_by("name")})


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
