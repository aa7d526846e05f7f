"""The diff of two versions, of one tokenizer or of two (``bpe/diff.py`` says what the verdicts
mean): for the page ``/diff/``, ``GET /api/diff`` and ``manage.py diff``, one plain dict."""

from __future__ import annotations

from ..bpe.diff import diff_encodings, diff_vocabs
from ..bpe.display import token_text
from ..bpe.metrics import HEADLINE_METRICS, METRICS
from ..errors import Damaged
from ..models import Corpus, Evaluation, TokenizerVersion
from ..storage import get_store

SAMPLE_BYTES = 1 << 20  # the corpus's lines compared: those of its first MB
LISTED = 200  # ids listed in the answer (the counts cover all of them)


def diff_versions(*, old: TokenizerVersion, new: TokenizerVersion,
                  corpus: Corpus | None = None, search: str = "") -> dict:
    """What changed from ``old`` to ``new``; with ``corpus``, how its lines encode and every
    headline metric side by side. ``search`` keeps the listed changed ids whose token (either
    side) holds it."""
    old_vocab, old_merges = _contents(old)
    new_vocab, new_merges = _contents(new)
    found = diff_vocabs(old_vocab, new_vocab, old.special_tokens, new.special_tokens,
                        old_merges, new_merges)
    rules_changed = (old.pattern, old.split, old.engine_description) != (
        new.pattern, new.split, new.engine_description) or (old.options or {}) != (
        new.options or {})
    if rules_changed and found.keeps_ids:  # the same ids, split or normalised otherwise
        found.verdict = "incompatible"
    changed = [(i, before, after) for i, before, after in found.changed
               if not search or search.encode() in before or search.encode() in (after or b"")]
    answer = {
        "from": old.label, "to": new.label, "verdict": found.verdict,
        "keeps_ids": found.keeps_ids, "rules_changed": rules_changed,
        "changed_count": len(found.changed),
        "changed": [{"id": i, "from": _text(before), "to": None if after is None else _text(after)}
                    for i, before, after in changed[:LISTED]],
        "id_map": [{"from": a, "to": b} for a, b in list(found.id_map.items())[:LISTED]],
        "new_ids": list(found.new_ids) if found.new_ids else None,
        "added_count": len(found.added), "removed_count": len(found.removed),
        "added": [{"id": i, "token": _text(t)} for i, t in found.added[:LISTED]],
        "removed": [{"id": i, "token": _text(t)} for i, t in found.removed[:LISTED]],
        "merges_added": found.merges_added, "merges_removed": found.merges_removed,
        "corpus": None}
    if corpus is not None:
        answer["corpus"] = corpus_diff(old=old, new=new, corpus=corpus)
    return answer


def corpus_diff(*, old: TokenizerVersion, new: TokenizerVersion, corpus: Corpus) -> dict:
    """The lines of the corpus's first MB encoded by both, and the stored evaluations' headline
    metrics side by side (None where a version is not evaluated on it yet)."""
    lines = sample_lines(corpus)
    encoded = diff_encodings(old.cached_tokenizer().encode_ordinary,
                             new.cached_tokenizer().encode_ordinary, lines)
    share = encoded["unchanged_lines"] / encoded["lines"] if encoded["lines"] else None
    metrics = {version.pk: Evaluation.objects.filter(
        version=version, corpus=corpus, status=Evaluation.Status.SUCCEEDED).first()
        for version in (old, new)}
    rows = []
    for name in HEADLINE_METRICS:
        before, after = (metrics[v.pk].metrics.get(name) if metrics[v.pk] else None
                         for v in (old, new))
        rows.append({"name": name, "label": METRICS[name][0], "unit": METRICS[name][1],
                     "higher_is_better": METRICS[name][2], "from": before, "to": after,
                     "change": None if before is None or after is None else after - before})
    return {"name": corpus.name, "sampled_bytes": min(corpus.size_bytes, SAMPLE_BYTES),
            "unchanged_share": share, **encoded, "metrics": rows}


def sample_lines(corpus: Corpus) -> list[str]:
    """The whole lines of the corpus's first ``SAMPLE_BYTES``."""
    try:
        data = get_store().read_range(corpus.object_name, 0, SAMPLE_BYTES)
    except OSError as exc:
        raise Damaged(f"the file of corpus {corpus.name!r} cannot be read ({exc.strerror}); "
                      f"run manage.py verify") from None
    if corpus.size_bytes > SAMPLE_BYTES and b"\n" in data:
        data = data[:data.rindex(b"\n") + 1]
    return [line for line in data.decode("utf-8", "replace").splitlines() if line]


def _contents(version: TokenizerVersion) -> tuple[dict[int, bytes], list]:
    vocab, merges, _counts, _specials = version.read_contents()
    return {i: bytes(t) for i, t in vocab.items()}, [(bytes(a), bytes(b)) for a, b in merges]


def _text(token: bytes) -> str:
    """A token for display (``<0xNN>`` for bytes that are not UTF-8, whitespace visible)."""
    return token_text(token)
