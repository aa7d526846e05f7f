"""``/metrics/``: what every metric counts, its unit, which way is better and how it is computed
(``bpe.metrics.DEFINITIONS``), one anchor per metric, linked beside each metric's label."""

from django.shortcuts import render

from ..bpe.metrics import DEFINITIONS, METRICS, TIMING_METRICS
from .access import readable


@readable
def glossary(request):
    return render(request, "tokenizers_app/metrics.html", {"metrics": [
        {"name": name, "label": label, "unit": unit, "higher_is_better": higher,
         "timing": name in TIMING_METRICS, "counts": DEFINITIONS[name][0],
         "computed": DEFINITIONS[name][1]}
        for name, (label, unit, higher) in METRICS.items()]})
