"""The corpora of a run: names, Corpus objects, or ``{"name": ..., "weight": ...}`` (a corpus
whose word/pre-token counts are multiplied by its weight before merging)."""

from __future__ import annotations

from ..bpe.counting import check_weights
from ..errors import Invalid
from ..models import Corpus


def weighted_names(corpora) -> tuple[list[str], dict[str, int]]:
    """The corpus names, and the weights other than 1 by corpus name, for a list of corpora,
    corpus names, or ``{"name": ..., "weight": ...}`` (a weight is a whole number from 1 to
    ``MAX_CORPUS_WEIGHT``; 1 when not given). A bad weight or a corpus given twice is
    ``Invalid`` in words."""
    items = list(corpora or [])
    names, weights = [], {}
    for index, item in enumerate(items):
        name, weight = _name_and_weight(index, item)
        if name in names:
            raise Invalid(f"corpus {name!r} is given twice: give it once, with a weight to count "
                          f"it more", field="corpus")
        names.append(name)
        if weight != 1:
            weights[name] = weight
    return names, weights


def _name_and_weight(index: int, item) -> tuple[str, int]:
    if isinstance(item, Corpus):
        return item.name, 1
    if isinstance(item, str):
        return item, 1
    if not isinstance(item, dict) or not isinstance(item.get("name"), str):
        raise Invalid(f"corpus {index + 1} of the list is neither a name nor "
                      f'{{"name": ..., "weight": ...}}', field="corpus")
    unknown = sorted(set(item) - {"name", "weight"})
    if unknown:
        raise Invalid(f"corpus {item['name']!r}: {', '.join(unknown)} is not a field of a "
                      f"weighted corpus (name, weight)", field="corpus")
    weight = item.get("weight", 1)
    try:
        check_weights([weight])
    except ValueError as exc:
        raise Invalid(f"corpus {item['name']!r}: {exc}", field="weight") from None
    return item["name"], weight


def resolve_corpora(corpora) -> list[Corpus]:
    """Corpus objects for a list of corpora or corpus names (an unknown name is ``NotFound``)."""
    corpora = list(corpora or [])
    if not corpora:
        raise Invalid("choose at least one corpus to train on", field="corpus")
    if any(isinstance(c, dict) for c in corpora):
        raise Invalid("an extension run takes its corpora without weights: give their names",
                      field="corpus")
    names = [c.name if isinstance(c, Corpus) else c for c in corpora]
    return Corpus.objects.by_names(names)
