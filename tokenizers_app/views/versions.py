"""``/tokenizers/``: a tokenizer's versions, a version's page (metrics on every evaluation corpus,
lineage, downloads, token lengths), its vocabulary (searchable), its merge table, and how one
token was built."""

from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from ..bpe.inspection import merge_tree
from ..downloads import artifact_response
from ..engines import FORMAT_TEXT, describe
from ..errors import REFUSALS, NotFound
from ..guards import refusal
from ..models import Corpus, MergeRule, Tokenizer, TokenizerVersion, VocabEntry
from ..services.downloads import render_download, version_download_formats
from ..services.evaluations import cancel_evaluation, request_evaluation
from ..services.extensions import is_extendable
from ..services.gates import goldens_kept
from ..services.deletions import delete_tokenizer, tokenizer_dependents
from ..services.permissions import may_add_version, may_cancel_evaluation, may_delete
from ..services.versions import IMPORT_FORMATS
from .access import confirmed, readable

PAGE_SIZE = 100
RUNS_SHOWN = 10  # a tokenizer's runs that made no version, latest first
TREE_NODES_SHOWN = 600


def _version(name: str, ref: str) -> TokenizerVersion:
    """The version, or ``NotFound`` (the 404 page with the reason, from ``guards``)."""
    return TokenizerVersion.objects.select_related(
        "tokenizer", "training_run", "created_by").resolve(f"{name}@{ref}")


@readable
def tokenizer_detail(request, name):
    tokenizer = get_object_or_404(Tokenizer, name=name)
    versions = tokenizer.versions.latest_first().prefetch_related("aliases").select_related(
        "training_run__extends")
    deletable = may_delete(request.user, tokenizer.owner_id)
    return render(request, "tokenizers_app/tokenizer.html", {
        "tokenizer": tokenizer, "versions": versions,
        "may_add": may_add_version(request.user, tokenizer),
        "aliases": tokenizer.aliases.select_related("version").order_by("name"),
        "unmade": tokenizer.runs.without_versions().order_by("-created_at")[:RUNS_SHOWN],
        "may_delete": deletable,
        "dependents": tokenizer_dependents(tokenizer) if deletable else []})


@login_required
@require_POST
def tokenizer_delete(request, name):
    """Its owner, or staff, once it has no version and no run."""
    tokenizer = get_object_or_404(Tokenizer, name=name)
    confirmed(request)
    delete_tokenizer(tokenizer=tokenizer, user=request.user)
    messages.success(request, f"tokenizer {name} is deleted")
    return redirect("tokenizers")


@readable
def version_detail(request, name, ref):
    version = _version(name, ref)
    evaluations = list(version.evaluations.without_word_tokens().select_related("corpus")
                       .order_by("corpus__name"))
    done = {e.corpus_id for e in evaluations if e.status not in e.ENDED_WITHOUT_METRICS}
    under_way = [e for e in evaluations if e.status in (e.Status.QUEUED, e.Status.RUNNING)]
    for e in evaluations:  # the cancel button, where this user may press it
        e.cancellable = e in under_way and may_cancel_evaluation(request.user, e)
    if request.headers.get("HX-Request") and request.GET.get("part") == "metrics":
        response = render(request, "tokenizers_app/includes/version_metrics.html", {
            "version": version, "evaluations": evaluations,
            "evaluations_under_way": under_way})
        if not under_way:
            response["HX-Refresh"] = "true"  # the whole page: the evaluate form's corpora too
        return response
    lengths = version.token_length_histogram()
    formats = version_download_formats(version)
    tokenizer = version.cached_tokenizer()
    return render(request, "tokenizers_app/version.html", {
        "version": version, "ref": ref, "lineage": version.lineage(),
        "kind": describe(tokenizer), "formats": formats,
        "format_texts": [(format, FORMAT_TEXT[format]) for format in formats],
        "kind_notes": [(version.label, version.get_algorithm_display(),
                        version.kind_notes())],
        "evaluations": evaluations, "evaluations_under_way": under_way, "evaluable": [
            c for c in Corpus.objects.for_evaluation().order_by("name") if c.pk not in done],
        "aliases": version.aliases.order_by("name"), "use": usage_urls(request, version),
        "extendable": is_extendable(version),
        "goldens": goldens_kept(version),
        "may_pin": may_add_version(request.user, version.tokenizer),
        "parent": version.training_run.extends if version.training_run_id else None,
        "previous": version.tokenizer.versions.ready().filter(number__lt=version.number)
        .order_by("-number").first(),
        "lengths": {"lengths": [length for length, _ in lengths],
                    "tokens": [tokens for _, tokens in lengths]}})


def usage_urls(request, version) -> dict:
    """This version's addresses for the "Use this tokenizer" snippets: its downloads (by number:
    they never change) and the API's encode endpoint, absolute on this host."""
    name, number = version.tokenizer.name, version.number
    def absolute(path: str) -> str:  # noqa: E306
        return request.build_absolute_uri(path)
    return {"name": name, **{format.replace("-", "_"): absolute(reverse(
                "download", args=[name, number, format]))
             for format in version_download_formats(version)},
            "encode": absolute(reverse("api:encode", args=[name, number]))}


@login_required
@require_POST
def version_evaluate(request, name, ref):
    """Evaluate the version on the evaluation corpus POSTed (``corpus``), in a worker."""
    version = _version(name, ref)
    [corpus] = Corpus.objects.by_names([request.POST.get("corpus", "")])
    request_evaluation(version=version, corpus=corpus)
    messages.success(request, f"{version.label} is being evaluated on {corpus.name}")
    return redirect("version", name=version.tokenizer.name, ref=version.number)


@login_required
@require_POST
def version_evaluation_cancel(request, name, ref):
    """Cancel the version's evaluation on the corpus POSTed (``corpus``): its tokenizer's
    owner, the corpus's uploader or staff; anyone else gets a 403 in words (``guards``)."""
    version = _version(name, ref)
    evaluation = get_object_or_404(version.evaluations.select_related("corpus"),
                                   corpus__name=request.POST.get("corpus", ""))
    evaluation = cancel_evaluation(evaluation=evaluation, user=request.user)
    messages.info(request, f"the evaluation of {version.label} on {evaluation.corpus.name} is "
                           f"{evaluation.status}")
    return redirect("version", name=version.tokenizer.name, ref=version.number)


@readable
def version_vocab(request, name, ref):
    """The learned tokens (``show=all``: every token; a search looks through every token unless
    ``show=learned``), in rank order or by length."""
    version = _version(name, ref)
    query = request.GET.get("q", "")
    show = request.GET.get("show") or ("all" if query else "learned")
    sort = "length" if request.GET.get("sort") == "length" else "rank"
    entries = VocabEntry.objects.filter(version=version).containing(query.encode())
    entries = entries if show == "all" else entries.learned()
    page = Paginator(entries.by(sort), PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "tokenizers_app/vocab.html", {
        "version": version, "ref": ref, "page": page, "query": query, "show": show,
        "kind": describe(version.cached_tokenizer()),
        "sort": sort, "extra": urlencode({"show": show, "sort": sort})})


@readable
def version_merges(request, name, ref):
    version = _version(name, ref)
    query = request.GET.get("q", "")
    merges = MergeRule.objects.filter(version=version).containing(query.encode())
    page = Paginator(merges.order_by("rank"), PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "tokenizers_app/merges.html", {
        "version": version, "ref": ref, "page": page, "query": query,
        "kind": describe(version.cached_tokenizer()),
        "first_id": version.first_merge_id})


@readable
def token_detail(request, name, ref, token_id):
    version = _version(name, ref)
    tokenizer = version.cached_tokenizer()
    try:
        tree = merge_tree(tokenizer, token_id)
    except ValueError as exc:
        raise NotFound(str(exc)) from None
    kind = describe(tokenizer)
    nodes = [(depth, node, kind.leaf(node["id"], node["token"]))
             for depth, node in tree_rows(tree, TREE_NODES_SHOWN + 1)]
    return render(request, "tokenizers_app/token.html", {
        "version": version, "ref": ref, "tree": tree, "nodes": nodes[:TREE_NODES_SHOWN],
        "kind": kind, "leaf": kind.leaf(tree["id"], tree["token"]),
        "truncated": len(nodes) > TREE_NODES_SHOWN})


def tree_rows(tree: dict, most: int) -> list[tuple[int, dict]]:
    """``(depth, node)`` of a merge tree in reading order (the token, then its left part's tree,
    then its right part's), without recursion, at most ``most`` rows."""
    rows, stack = [], [(0, tree)]
    while stack and len(rows) < most:
        depth, node = stack.pop()
        rows.append((depth, node))
        stack.extend((depth + 1, child) for child in reversed(node["children"]))
    return rows


@readable
def version_download(request, name, ref, format):
    """The version's files in one format, as an attachment; ``ETag`` is the bytes' sha256. A
    format that cannot hold this version (minbpe and a special token with a space, say) is a
    400 in words, as the API answers it."""
    version = _version(name, ref)
    if format not in IMPORT_FORMATS:
        raise NotFound(f"no format {format!r}: choose one of {', '.join(IMPORT_FORMATS)}")
    try:
        download = render_download(version=version, format=format)
    except REFUSALS as refused:  # a registry error keeps its own status (a full disk 507)
        return refusal(request, str(refused), getattr(refused, "status", 400))
    return artifact_response(request, download)
