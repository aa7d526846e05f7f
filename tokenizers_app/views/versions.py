"""``/tokenizers/``: a tokenizer's versions, a version's page (metrics on every evaluation corpus,
lineage, downloads, token lengths), its vocabulary (searchable), its merge table, and how one
token was built."""

from django.core.paginator import Paginator
from django.db.models import Count
from django.db.models.functions import Length
from django.http import FileResponse, Http404, HttpResponse
from django.shortcuts import get_object_or_404, render

from ..bpe.formats import FORMATS
from ..bpe.inspection import merge_tree
from ..models import MergeRule, Tokenizer, TokenizerVersion, VocabEntry
from ..services.versions import render_download
from .access import readable

PAGE_SIZE = 100
TREE_NODES_SHOWN = 600


def _version(name: str, ref: str) -> TokenizerVersion:
    try:
        return TokenizerVersion.objects.select_related("tokenizer", "training_run",
                                                       "created_by").get(
            pk=TokenizerVersion.objects.resolve(f"{name}@{ref}").pk)
    except ValueError as exc:
        raise Http404(str(exc)) from None


@readable
def tokenizer_detail(request, name):
    tokenizer = get_object_or_404(Tokenizer, name=name)
    versions = tokenizer.versions.ready().order_by("-number").prefetch_related("aliases")
    return render(request, "tokenizers_app/tokenizer.html", {
        "tokenizer": tokenizer, "versions": versions,
        "aliases": tokenizer.aliases.select_related("version").order_by("name")})


@readable
def version_detail(request, name, ref):
    version = _version(name, ref)
    lengths = (VocabEntry.objects.filter(version=version).exclude(kind=VocabEntry.Kind.SPECIAL)
               .annotate(length=Length("token")).values("length").annotate(tokens=Count("*"))
               .order_by("length"))
    return render(request, "tokenizers_app/version.html", {
        "version": version, "ref": ref, "lineage": version.lineage(), "formats": FORMATS,
        "evaluations": version.evaluations.without_word_tokens().select_related("corpus")
                                          .order_by("corpus__name"),
        "aliases": version.aliases.order_by("name"),
        "lengths": {"lengths": [row["length"] for row in lengths],
                    "tokens": [row["tokens"] for row in lengths]}})


@readable
def version_vocab(request, name, ref):
    version = _version(name, ref)
    query = request.GET.get("q", "")
    entries = VocabEntry.objects.filter(version=version).containing(query.encode())
    page = Paginator(entries.order_by("token_id"), PAGE_SIZE).get_page(request.GET.get("page"))
    return render(request, "tokenizers_app/vocab.html", {
        "version": version, "ref": ref, "page": page, "query": query})


@readable
def version_merges(request, name, ref):
    version = _version(name, ref)
    merges = MergeRule.objects.filter(version=version).order_by("rank")
    page = Paginator(merges, PAGE_SIZE).get_page(request.GET.get("page"))
    for merge in page:  # (Postgres gives memoryviews)
        merge.result = bytes(merge.left) + bytes(merge.right)
    return render(request, "tokenizers_app/merges.html", {
        "version": version, "ref": ref, "page": page,
        "first_id": 256 + len(version.special_tokens) if version.standard_layout else None})


@readable
def token_detail(request, name, ref, token_id):
    version = _version(name, ref)
    try:
        tree = merge_tree(version.cached_tokenizer(), token_id)
    except ValueError as exc:
        raise Http404(str(exc)) from None
    nodes = tree_rows(tree, TREE_NODES_SHOWN + 1)
    return render(request, "tokenizers_app/token.html", {
        "version": version, "ref": ref, "tree": tree, "nodes": nodes[:TREE_NODES_SHOWN],
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
    """The version's files in one format, as an attachment; ``ETag`` is the bytes' sha256."""
    version = _version(name, ref)
    if format not in FORMATS:
        raise Http404(f"no format {format!r}: choose one of {', '.join(FORMATS)}")
    return artifact_response(request, render_download(version=version, format=format))


def artifact_response(request, download) -> HttpResponse:
    """A download as an attachment, sent from its file (sendfile where the server has it).

    ``ETag`` is the sha256 of the bytes; to a client that accepts gzip the same bytes go gzipped
    (a quarter of the size for ``tokenizer.json``) with the weak ``W/"sha256"``. ``If-None-Match``
    holding either answers ``304``."""
    etag = f'"{download.sha256}"'
    gzipped = accepts_gzip(request.headers.get("Accept-Encoding", ""))
    if gzipped:
        etag = f"W/{etag}"
    headers = {"ETag": etag, "Vary": "Accept-Encoding"}
    if f'"{download.sha256}"' in request.headers.get("If-None-Match", ""):
        return HttpResponse(status=304, headers=headers)
    path = download.gzip_path if gzipped else download.path
    response = FileResponse(path.open("rb"), as_attachment=True, filename=download.file_name,
                            content_type="application/octet-stream", headers=headers)
    if gzipped:
        response["Content-Encoding"] = "gzip"
    return response


def accepts_gzip(accept_encoding: str) -> bool:
    """``accepts_gzip("gzip, deflate, br") -> True``; ``"gzip;q=0"`` refuses it."""
    for coding in accept_encoding.lower().split(","):
        name, _, params = coding.strip().partition(";")
        if name.strip() in ("gzip", "x-gzip"):
            quality = params.strip().removeprefix("q=").strip()
            return quality == "" or quality.replace(".", "", 1).isdigit() and float(quality) > 0
    return False
