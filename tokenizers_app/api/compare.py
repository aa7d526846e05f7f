"""``/api/compare``: every metric of two or more versions on one evaluation corpus, the best of
each marked (the comparison the compare page shows)."""

from ninja import Query, Router

from ..models import TokenizerVersion
from ..services.comparisons import compare_versions, evaluation_corpus
from ..shapes import ComparisonOut
from .auth import READ
from .errors import ERRORS

router = Router(tags=["compare"])


@router.get("", response={200: ComparisonOut, **ERRORS}, auth=READ)
def compare(request, versions: str = Query(..., description="NAME@REF,NAME@REF,..."),
            corpus: str = Query(..., description="an evaluation corpus")):
    """``metrics``: each metric's label, unit, direction and the refs of the best versions;
    ``versions``: each version's status and metrics on the corpus (``null`` until evaluated).
    A corpus that is not an evaluation corpus is refused (400)."""
    found = compare_versions(versions=TokenizerVersion.objects.resolve_many(versions),
                             corpus=evaluation_corpus(corpus))
    return ComparisonOut.of(found)
