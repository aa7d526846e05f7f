"""``/api/diff``: what changed between two versions (``services.diffs``)."""

from ninja import Field, Query, Router, Schema

from ..models import Corpus, TokenizerVersion
from ..services.diffs import diff_versions
from .auth import READ
from .errors import ERRORS

router = Router(tags=["diff"])


class ChangedIdOut(Schema):
    id: int
    before: str = Field(alias="from")
    after: str | None = Field(None, alias="to")  # null: the id is gone


class IdMapOut(Schema):
    before: int = Field(alias="from")
    after: int = Field(alias="to")


class TokenOut(Schema):
    id: int
    token: str


class MetricChangeOut(Schema):
    name: str
    label: str
    unit: str
    higher_is_better: bool
    before: float | None = Field(None, alias="from")
    after: float | None = Field(None, alias="to")
    change: float | None


class ScriptOut(Schema):
    lines: int
    unchanged_lines: int
    tokens_before: int
    tokens_after: int


class CorpusDiffOut(ScriptOut):
    name: str
    sampled_bytes: int  # the lines of the corpus's first MB are encoded by both
    unchanged_share: float | None  # share of those lines whose ids are unchanged
    scripts: dict[str, ScriptOut]
    metrics: list[MetricChangeOut]  # stored evaluations, side by side (null: not evaluated)


class DiffOut(Schema):
    before: str = Field(alias="from")
    after: str = Field(alias="to")
    verdict: str  # identical, extends, same_tokens_other_ids, incompatible
    keeps_ids: bool  # a model trained on `from` reads `to`'s ids right
    rules_changed: bool  # the pattern (split) or options differ: text may split otherwise
    changed_count: int  # ids of `from` that name another token (or none) in `to`
    changed: list[ChangedIdOut]  # the first 200 (matching `search`)
    id_map: list[IdMapOut]  # same_tokens_other_ids: old id -> new id (first 200)
    new_ids: list[int] | None  # extends: [first, last] new id
    added_count: int
    removed_count: int
    added: list[TokenOut]
    removed: list[TokenOut]
    merges_added: int
    merges_removed: int
    corpus: CorpusDiffOut | None


@router.get("", response={200: DiffOut, **ERRORS}, auth=READ, by_alias=True)
def diff(request, source: str = Query(..., alias="from", description="NAME@REF"),
         target: str = Query(..., alias="to", description="NAME@REF"),
         corpus: str | None = Query(None, description="a corpus to encode with both"),
         search: str = Query("", description="list only changed ids whose token holds this")):
    """The verdict (identical, extends, same_tokens_other_ids, incompatible), the ids that name
    other tokens, tokens added and removed, merges added; with ``corpus``, the share of its
    lines whose ids are unchanged and the tokens before and after, per script."""
    versions = TokenizerVersion.objects.select_related("tokenizer")
    found = diff_versions(old=versions.resolve(source), new=versions.resolve(target),
                          corpus=Corpus.objects.by_names([corpus])[0] if corpus else None,
                          search=search)
    return found
