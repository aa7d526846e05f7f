"""``/parallel/``: parallel sets, uploading one, and a set's page: the premium of every version
per language (a heat map and a table), the parity spread, and where two versions differ most."""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render

from ..errors import RegistryError
from ..forms import ParallelUploadForm, add_service_error
from ..models import ParallelSet
from ..services.parallel import import_parallel_set
from ..services.parity import WITHIN, most_different, parity
from .access import readable


@readable
def parallel_list(request):
    sets = ParallelSet.objects.prefetch_related("members")
    return render(request, "tokenizers_app/parallel_sets.html", {"sets": sets})


@readable
def parallel_detail(request, name):
    result = parity(parallel_set=ParallelSet.objects.named(name))
    labels = [row.label for row in result.versions]
    chosen = request.GET.get("version") if request.GET.get("version") in labels else None
    chosen = chosen or (labels[0] if labels else None)
    sort = request.GET.get("sort") if request.GET.get("sort") in labels else None
    languages = _sorted_languages(result, sort)
    by_language = request.GET.get("language")
    if by_language in result.languages:  # the versions, lowest premium on it first
        result.versions.sort(key=lambda row: row.scores[by_language].premium or float("inf"))
    else:
        by_language = None
    pair = [label for label in request.GET.getlist("pair") if label in labels][:2]
    if len(pair) < 2:
        pair = labels[:2]
    return render(request, "tokenizers_app/parallel_set.html", {
        "result": result, "set": result.parallel_set, "languages": languages, "sort": sort,
        "by_language": by_language,
        "chosen": next((row for row in result.versions if row.label == chosen), None),
        "pair": pair, "within": WITHIN,
        "differences": most_different(result, *pair) if len(pair) == 2 else []})


def _sorted_languages(result, sort):
    """The pivot first, then by ``sort``'s premium, highest first (unknown last)."""
    if sort is None:
        return result.languages
    row = next(row for row in result.versions if row.label == sort)
    pivot, *others = result.languages
    return [pivot, *sorted(others, key=lambda lang: -(row.scores[lang].premium or -1))]


@login_required
def parallel_upload(request):
    form = ParallelUploadForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            created = import_parallel_set(
                data=upload.read(), name=form.cleaned_data["name"],
                pivot=form.cleaned_data["pivot"] or "en", original_filename=upload.name,
                uploaded_by=request.user)
        except RegistryError as exc:
            add_service_error(form, exc)
        else:
            messages.success(request, _uploaded_message(created))
            return redirect("parallel_set", name=created.name)
    return render(request, "tokenizers_app/parallel_upload.html",
                  {"form": form, "max_bytes": settings.PARALLEL_MAX_BYTES},
                  status=400 if form.is_bound else 200)


def _uploaded_message(created: ParallelSet) -> str:
    skipped = ", ".join(f"{n} {reason}" for reason, n in created.skipped.items())
    return (f"parallel set {created.name}: {created.line_count} aligned lines in "
            f"{created.members.count()} languages; {created.dropped_lines} lines missing in "
            f"some language were dropped from every language"
            + (f"; skipped while reading: {skipped}" if skipped else "")
            + ". Every ready version is being evaluated on each language.")
