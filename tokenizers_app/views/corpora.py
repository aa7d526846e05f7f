"""``/corpora/``: the corpora, an upload staged while its body arrives, a corpus's page, marking it
as an evaluation corpus, and its file behind an access check."""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from ..errors import RegistryError
from ..forms import CorpusUploadForm, add_service_error
from ..models import Corpus, check_name
from ..services.corpora import import_staged_corpus, set_evaluation
from ..services.deletions import corpus_dependents, delete_corpus
from ..services.permissions import may_delete, may_switch_evaluation
from ..storage import get_store
from ..uploads import receives_upload, staged_upload
from .access import confirmed, readable

SAMPLE_BYTES = 2000


@readable
def corpus_list(request):
    corpora = Corpus.objects.order_by("name").select_related("uploaded_by")
    return render(request, "tokenizers_app/corpora.html", {"corpora": corpora})


@readable
def corpus_detail(request, name):
    corpus = get_object_or_404(Corpus, name=name)
    sample = get_store().read_range(corpus.object_name, 0, SAMPLE_BYTES).decode(
        "utf-8", errors="ignore")
    return render(request, "tokenizers_app/corpus.html", {
        "corpus": corpus, "sample": sample,
        "may_switch_evaluation": may_switch_evaluation(request.user, corpus),
        "may_delete": may_delete(request.user, corpus.uploaded_by_id),
        "dependents": corpus_dependents(corpus) if may_delete(request.user,
                                                              corpus.uploaded_by_id) else [],
        "runs": corpus.runs.select_related("tokenizer").order_by("-created_at")[:50],
        "evaluations": corpus.evaluations.without_word_tokens().select_related(
                                 "version__tokenizer")
                             .order_by("-compression_ratio")[:100]})


@login_required
@require_POST
def corpus_evaluation(request, name):
    """Its uploader, or staff; anyone else gets a 403 in words (``guards``)."""
    corpus = set_evaluation(corpus=get_object_or_404(Corpus, name=name),
                            is_evaluation=request.POST.get("evaluation") == "on",
                            user=request.user)
    messages.success(request, f"{corpus.name} is now an evaluation corpus: every ready version "
                              f"is being evaluated on it" if corpus.is_evaluation else
                              f"{corpus.name} is no longer an evaluation corpus")
    return redirect("corpus", name=corpus.name)


@login_required
@require_POST
def corpus_delete(request, name):
    """Its uploader, or staff, once nothing depends on it (a refusal is a page in words)."""
    corpus = get_object_or_404(Corpus, name=name)
    confirmed(request)
    delete_corpus(corpus=corpus, user=request.user)
    messages.success(request, f"corpus {name} is deleted, and its file")
    return redirect("corpora")


@login_required
def corpus_file(request, name):
    corpus = get_object_or_404(Corpus, name=name)
    response = FileResponse(get_store().open(corpus.object_name), as_attachment=True,
                            filename=f"{corpus.name}.txt",
                            content_type="text/plain; charset=utf-8")
    response["Content-Length"] = corpus.size_bytes
    return response


@login_required
@receives_upload
def corpus_upload(request):
    """The upload form. The file is staged only now, once sign-in and CSRF passed
    (``uploads.receives_upload``); what a refused upload staged is removed by
    ``uploads.CorpusUploadMiddleware`` before the answer leaves."""
    form = CorpusUploadForm(request.POST if request.method == "POST" else None)
    status = 200
    if request.method == "POST":
        corpus, status = _register(request, form)
        if corpus is not None:
            duplicate = corpus.name_not_used(form.cleaned_data["name"])
            if duplicate:
                messages.warning(request, duplicate)
            else:
                messages.success(request, f"corpus {corpus.name}: {corpus.size_bytes} bytes, "
                                          f"sha256 {corpus.sha256[:12]}…")
            return _redirect(request, reverse("corpus", args=[corpus.name]))
    # htmx swaps only 2xx answers: it gets the page with its errors as 200
    return render(request, "tokenizers_app/corpus_upload.html",
                  {"form": form, "max_bytes": settings.CORPUS_MAX_BYTES},
                  status=200 if request.headers.get("HX-Request") else status)


def _register(request, form) -> tuple[Corpus | None, int]:
    """The corpus of a valid upload, or None with the reason on the form and the status to
    answer with."""
    upload, error = staged_upload(request)
    valid = form.is_valid()
    if error is not None:
        return None, add_service_error(form, error)
    if upload is None:
        form.add_error(None, "choose a UTF-8 text file to upload")
        if form.cleaned_data.get("name"):  # every error at once: the name's too
            try:
                check_name("corpus", form.cleaned_data["name"], field="name")
            except RegistryError as refused:
                add_service_error(form, refused)
    elif valid:
        try:
            return import_staged_corpus(staged=upload.staged, name=form.cleaned_data["name"],
                                        original_filename=upload.name,
                                        uploaded_by=request.user,
                                        is_evaluation=form.cleaned_data["evaluation"],
                                        language=form.cleaned_data["language"])[0], 201
        except (RegistryError, ValueError) as exc:
            return None, add_service_error(form, exc)
    return None, 400


def _redirect(request, url: str) -> HttpResponse:
    """A redirect that htmx follows as a page load (``HX-Redirect``), or a plain 302."""
    if request.headers.get("HX-Request"):
        return HttpResponse(headers={"HX-Redirect": url})
    return redirect(url)
