"""``/compare/`` (every metric of 2+ versions on one corpus, charts, and the words they split
differently) and ``/playground/`` (a text encoded by several versions and the baselines)."""

from dataclasses import asdict
from itertools import groupby
from urllib.parse import urlencode

from django.shortcuts import render
from django.urls import reverse

from ..bpe.baselines import ByteTokenizer, CharTokenizer
from ..bpe.inspection import words_split_differently
from ..bpe.match_budget import PatternBusy, PatternTooSlow
from ..engines.sandbox import EngineBusy, EngineFailed
from ..bpe.metric_text import metric_shown
from ..bpe.metrics import HEADLINE_METRICS
from ..bpe.token_groups import mark_differences, token_groups
from ..engines import kind_notes, unknown_token
from ..errors import REFUSALS, Unencodable
from ..models import Corpus, ParallelSet, TokenizerVersion
from ..services.comparisons import compare_versions, evaluation_corpus
from ..services.parity import parity
from .access import readable

PLAYGROUND_MAX_CHARS = 20_000
# The playground's form is POSTed (a text of 20,000 characters is up to 180 KB once encoded in a
# URL, and servers refuse request lines over 4 KB: gunicorn's 414); a text whose link fits in
# this many characters also gets a shareable GET link.
SHARE_LINK_MAX_CHARS = 2_000
PLAYGROUND_MAX_VERSIONS = 4
SPLIT_WORDS_SHOWN = 50
BASELINES = [("bytes", ByteTokenizer()), ("characters", CharTokenizer())]


PICKER_MOST = 300  # versions in the picker's list (the latest of each tokenizer first)


def asked_refs(data) -> str:
    """The refs asked for: the typed list (``versions``), then the versions checked in the
    picker's list (``pick``, sent when no script joined them to the typed list), each once:
    ``versions=a@1&pick=a@2&pick=a@1`` -> ``"a@1,a@2"``."""
    refs = [ref.strip() for ref in data.get("versions", "").split(",") if ref.strip()]
    refs += [ref for ref in dict.fromkeys(data.getlist("pick")) if ref not in refs]
    return ",".join(refs)


def version_choices() -> list[tuple[str, list]]:
    """The picker's list: ``(tokenizer name, its ready versions latest first)`` by name, each
    version with its aliases."""
    versions = (TokenizerVersion.objects.ready().select_related("tokenizer")
                .prefetch_related("aliases").order_by("tokenizer__name", "-number")[:PICKER_MOST])
    return [(name, list(group)) for name, group in groupby(versions, lambda v: v.tokenizer.name)]


def _versions(refs: str, form_errors: list, most: int = 8) -> list:
    if not refs:
        return []
    try:
        return TokenizerVersion.objects.resolve_many(refs, most=most)
    except REFUSALS as exc:
        form_errors.append(str(exc))
        return []


def _corpus(request, corpora, form_errors: list) -> Corpus | None:
    """The evaluation corpus asked for; else (none asked, or refused) the first one."""
    name = request.GET.get("corpus")
    if name:
        try:
            return evaluation_corpus(name)
        except REFUSALS as exc:
            form_errors.append(str(exc))
    return corpora.first()


@readable
def compare(request):
    errors: list[str] = []
    refs = asked_refs(request.GET)
    versions = _versions(refs, errors)
    corpora = Corpus.objects.for_evaluation().order_by("name")
    corpus = _corpus(request, corpora, errors)
    found = compare_versions(versions=versions, corpus=corpus) if corpus and versions else None
    columns = found.columns if found else []
    return render(request, "tokenizers_app/compare.html", {
        "errors": errors, "versions": versions, "corpus": corpus, "corpora": corpora,
        "columns": columns, "rows": [asdict(row) for row in found.rows if row.reported]
        if found else [], "charts": chart_data(found.rows) if found else [],
        "chart_names": HEADLINE_METRICS,
        "split_words": split_words(columns), "refs": refs,
        "choices": version_choices(), "picked": {v.label for v in versions},
        "kind_notes": notes_of(versions),
        "sweep": sweep_curve(columns),
        "sets": ParallelSet.objects.all(),
        "set_premiums": _set_premiums(request.GET.get("set"), versions, errors)})


def _set_premiums(name: str | None, versions: list, errors: list):
    """The premium per language of the compared versions on the parallel set ``name``."""
    if not name or not versions:
        return None
    try:
        return parity(parallel_set=ParallelSet.objects.named(name), versions=versions)
    except REFUSALS as refused:
        errors.append(str(refused))
        return None


def notes_of(versions: list) -> list[tuple[str, str, list[str]]]:
    """``(label, kind shown, notes)`` per version: what its numbers mean for its kind."""
    return [(v.label, v.get_algorithm_display(), kind_notes(v.algorithm, v.engine_description))
            for v in versions]


def chart_data(rows) -> list[dict]:
    """The headline metrics' bars, in the unit of the table's cells (``metric_shown``: a share
    in %, its axis 0-100)."""
    return [{"name": row.name, "label": row.label, "unit": row.unit,
             "values": [metric_shown(value, row.name) for value in row.values],
             "max": 100 if row.unit == "%" else None}
            for row in rows if row.name in HEADLINE_METRICS]


def split_words(columns: list) -> list:
    """The words of the corpus the versions cut differently, most frequent first, each with its
    tokens (bytes) in every version."""
    samples = [e.word_tokens if e and e.word_tokens else None for _, e in columns]
    if len(samples) < 2 or None in samples:
        return []
    tokenizers = [v.cached_tokenizer() for v, _ in columns]
    vocabs = [t.vocab for t in tokenizers]
    found = words_split_differently(samples, vocabs, [getattr(t, "suffix", "")
                                                      for t in tokenizers])[:SPLIT_WORDS_SHOWN]
    return [(word, count, [[vocab[i] for i in ids] for vocab, ids in zip(vocabs, per)])
            for word, count, per in found]


def sweep_curve(columns: list) -> dict | None:
    """Compression ratio against vocab size of the compared versions that one run made (a
    sweep): the run with the most of them, if it made 2 or more."""
    by_run: dict[int, list] = {}
    for version, evaluation in columns:
        if version.training_run_id and evaluation and evaluation.status == \
                evaluation.Status.SUCCEEDED:
            by_run.setdefault(version.training_run_id, []).append(
                (version.vocab_size, evaluation.metrics["compression_ratio"], version.label))
    points = sorted(max(by_run.values(), key=len, default=[]))
    if len(points) < 2:
        return None
    return {"vocab_sizes": [p[0] for p in points], "ratios": [p[1] for p in points],
            "labels": [p[2] for p in points]}


@readable
def playground(request):
    """The form POSTs its text (any length up to the cap); a GET link with ``versions`` and
    ``text`` (a shared one) answers the same."""
    data = request.POST if request.method == "POST" else request.GET
    errors: list[str] = []
    refs, text = asked_refs(data), data.get("text", "")
    versions = _versions(refs, errors, most=PLAYGROUND_MAX_VERSIONS)
    if len(text) > PLAYGROUND_MAX_CHARS:
        errors.append(f"the text holds {len(text)} characters; the playground encodes at most "
                      f"{PLAYGROUND_MAX_CHARS}: shorten it (or use the encode API)")
        text = text[:PLAYGROUND_MAX_CHARS]
    try:
        rows = [(v.label, _encoded(v.cached_tokenizer(), text)) for v in versions]
    except (PatternTooSlow, PatternBusy, Unencodable, EngineFailed, EngineBusy) as refused:  # the
        # budget for splitting text ran out or no slot for it was free, a version cannot spell a
        # character of the text, or another library's tokenizer failed in its child process
        errors.append(str(refused))
        rows, status = [], refused.status
    else:
        status = 200
    if len(rows) > 1:  # mark where the versions cut the text differently
        for (_, encoded), differs in zip(rows, mark_differences([e["groups"] for _, e in rows])):
            encoded["differs"] = differs
    others = max(len(rows) - 1, 0)
    unknown = any(encoded["unknown"] for _, encoded in rows)
    baselines = [(name, len(baseline.encode_ordinary(text))) for name, baseline in BASELINES
                 ] if text else []  # counts alone: their strips would repeat the text
    link = share_link(refs, text)
    response = render(request, "tokenizers_app/playground.html", {
        "errors": errors, "text": text, "refs": refs, "rows": rows, "link": link,
        "baselines": baselines,
        "link_max": SHARE_LINK_MAX_CHARS, "most": PLAYGROUND_MAX_VERSIONS,
        "others": others, "unknown": unknown,
        "encoded": bool(text) and not (refs.strip() and not rows),  # else no results to show
        "choices": version_choices(), "picked": {v.label for v in versions},
        "picker_label": f"Versions (1 to {PLAYGROUND_MAX_VERSIONS}, comma separated)"},
        status=status)
    response["HX-Push-Url"] = link or "false"  # the address bar shows a link that works
    return response


def share_link(refs: str, text: str) -> str | None:
    """The GET link to these results, or None when it would be too long to work everywhere:
    ``share_link("a@1", "hi") -> "/playground/?versions=a%401&text=hi"``."""
    link = reverse("playground") + "?" + urlencode({"versions": refs, "text": text})
    return link if len(link) <= SHARE_LINK_MAX_CHARS else None


def _encoded(tokenizer, text: str) -> dict:
    """The text's groups of tokens (``bpe.token_groups``), how many tokens, how many characters
    were cut into several tokens (and into how many tokens in all), and how many groups hold an
    unknown token (a character-level version's ``<unk>``; its text is ``unk_token``)."""
    groups = token_groups(tokenizer, text)
    cut = [len(g["ids"]) for g in groups if len(g["ids"]) > 1]
    return {"count": sum(len(g["ids"]) for g in groups), "groups": groups,
            "cut_groups": len(cut), "cut_tokens": sum(cut),
            "unknown": sum(g["unknown"] for g in groups),
            "unk_token": unknown_token(tokenizer)}
