"""The playground on a parallel set: one line of the set in every language, tokenized by the
chosen versions, with each language's tokens on that line against the pivot's (the premium made
visible). ``/playground/?set=NAME&line=N&versions=A@1,B@2``."""

from itertools import islice

from django.shortcuts import render

from ..bpe.match_budget import PatternTooSlow
from ..engines.sandbox import EngineBusy, EngineFailed
from ..errors import REFUSALS, Unencodable
from ..models import ParallelSet
from ..services.parity import parity
from ..storage import get_store
from .access import readable
from .compare import PLAYGROUND_MAX_VERSIONS, _encoded, _versions, playground


@readable
def playground_or_line(request):
    """``/playground/``: with ``set``, one line of that parallel set in every language; else
    the playground (``compare.playground``)."""
    data = request.POST if request.method == "POST" else request.GET
    return parallel_line(request, data) if data.get("set") else playground(request)


def parallel_line(request, data):
    errors: list[str] = []
    try:
        chosen_set = ParallelSet.objects.named(data.get("set", ""))
    except REFUSALS as refused:
        return render(request, "tokenizers_app/parallel_line.html",
                      {"errors": [str(refused)]}, status=refused.status)
    number = _line_number(data.get("line"), chosen_set.line_count, errors)
    versions = _versions(data.get("versions", ""), errors, most=PLAYGROUND_MAX_VERSIONS) or \
        _evaluated(chosen_set)
    rows, status = [], 200
    try:
        rows = _line_rows(chosen_set, number, versions)
    except (PatternTooSlow, Unencodable, EngineFailed, EngineBusy) as refused:
        errors.append(str(refused))
        status = refused.status
    return render(request, "tokenizers_app/parallel_line.html", {
        "set": chosen_set, "line": number, "rows": rows, "errors": errors,
        "versions": versions, "refs": ",".join(v.label for v in versions)}, status=status)


def _line_number(asked, most: int, errors: list) -> int:
    """The asked line, 1 to ``most``; else line 1, with the reason."""
    try:
        number = int(asked or 1)
    except ValueError:
        number = 0
    if not 1 <= number <= most:
        errors.append(f"line {asked!r} is not a line of the set: choose 1 to {most}")
        return 1
    return number


def _evaluated(chosen_set) -> list:
    """The first versions evaluated on the set, when none are asked for."""
    labels = [row.label for row in parity(parallel_set=chosen_set).versions]
    return _versions(",".join(labels[:PLAYGROUND_MAX_VERSIONS]), [])


def _line_rows(chosen_set, number: int, versions) -> list[dict]:
    """Per language (the pivot first): its text of line ``number`` and, per version, the
    encoding and its tokens against the pivot's on the same line."""
    corpora = chosen_set.corpora()
    tokenizers = [(v.label, v.cached_tokenizer()) for v in versions]
    rows = []
    for language in chosen_set.languages():
        text = _nth_line(corpora[language], number)
        rows.append({"language": language, "text": text,
                     "encodings": [(label, _encoded(t, text)) for label, t in tokenizers]})
    pivot = rows[0]["encodings"]
    for row in rows:
        for (label, encoded), (_, base) in zip(row["encodings"], pivot):
            encoded["premium"] = encoded["count"] / base["count"] if base["count"] else None
    return rows


def _nth_line(corpus, number: int) -> str:
    with get_store().open(corpus.object_name) as stream:
        line = next(islice(stream, number - 1, None), b"")
    return line.decode().rstrip("\n")
