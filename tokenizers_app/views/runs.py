"""``/runs/``: the runs, a form to start one, a run's live page (htmx refreshes its progress
fragment from the same URL), and cancelling."""

from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from ..errors import RegistryError
from ..forms import PATTERNS, ExtendForm, RunForm, add_service_error
from ..models import Evaluation, TokenizerVersion, TrainingRun
from ..services.extensions import start_extension_run
from ..services.queue import QueueUnavailable
from ..services.deletions import delete_run, run_dependents
from ..services.permissions import may_cancel, may_delete
from ..services.run_refusals import training_run_refusals
from ..services.runs import cancel_training_run, start_training_run
from .access import confirmed, readable

CHART_POINTS = 400  # merges drawn on a run's chart of count against rank


@readable
def run_list(request):
    runs = TrainingRun.objects.select_related("tokenizer").prefetch_related("corpora")
    page = Paginator(runs, 50).get_page(request.GET.get("page"))
    return render(request, "tokenizers_app/runs.html", {"page": page})


@login_required
def run_new(request):
    if "extends" in request.GET or "extends" in request.POST:
        return run_extend(request)
    form = RunForm(request.POST or None, initial=RunForm.initial_from(request.GET))
    status = 400 if form.errors else 200
    if request.method == "POST":  # every error at once: the form's and the workflow's
        valid = form.is_valid()
        refusals = training_run_refusals(tokenizer_name=form.cleaned_data.get("tokenizer"),
                                         created_by=request.user, **form.run_parameters())
        statuses = [add_service_error(form, refused) for refused in refusals]
        status = statuses[0] if statuses else status  # the name's (a 403) comes first
    if request.method == "POST" and valid and not refusals:
        data = form.cleaned_data
        return _start_run(request, form, "tokenizers_app/run_new.html",
                          lambda: start_training_run(corpora=form.corpora_value(),
                                                     tokenizer_name=data["tokenizer"],
                                                     created_by=request.user,
                                                     **form.run_parameters()),
                          lambda run: f"run {run.pk} queued")
    return render(request, "tokenizers_app/run_new.html", {"form": form}, status=status)


def run_extend(request):
    """The run form of an extension run ("Extend this version" on a version page prefills it)."""
    initial = {name: request.GET[name] for name in ExtendForm.base_fields if name in request.GET}
    if "vocab_size" not in initial:
        initial["vocab_size"] = suggested_size(initial.get("extends", ""))
    form = ExtendForm(request.POST or None, initial=initial)
    status = 200
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        return _start_run(request, form, "tokenizers_app/run_extend.html",
                          lambda: start_extension_run(
                              extends=data["extends"], corpora=[data["corpus"]],
                              vocab_size=data["vocab_size"], min_frequency=data["min_frequency"],
                              sweep=data["sweep"], created_by=request.user),
                          lambda run: f"run {run.pk} queued: extends {run.extends.label}")
    elif form.errors:
        status = 400
    return render(request, "tokenizers_app/run_extend.html", {"form": form}, status=status)


def _start_run(request, form, template: str, start, queued_message):
    """Start a run with ``start()`` and go to its page, with ``queued_message(run)`` ("run 7
    queued"), or a warning when the queue did not answer (the run is recorded); a refused start
    shows ``template`` again with the refusal on the form, at its status (e.g. 400)."""
    try:
        run = start()
    except QueueUnavailable as unsent:
        messages.warning(request, str(unsent))
        return redirect("run", run_id=unsent.record.pk)
    except (RegistryError, ValueError) as exc:
        status = add_service_error(form, exc)
        return render(request, template, {"form": form}, status=status)
    messages.success(request, queued_message(run))
    return redirect("run", run_id=run.pk)


def suggested_size(ref: str) -> int | None:
    """A first total for extending ``ref``: an eighth more tokens (at least 256)."""
    try:
        size = TokenizerVersion.objects.resolve(ref).vocab_size
    except RegistryError:
        return None
    return size + max(256, size // 8)


@readable
def run_detail(request, run_id):
    run = get_object_or_404(TrainingRun.objects.select_related("tokenizer", "created_by"),
                            pk=run_id)
    context = {"run": run, "eta": run.seconds_left(), "total_seconds": run.total_seconds(),
               "may_cancel": may_cancel(request.user, run),
               "may_delete": may_delete(request.user, run.created_by_id),
               "run_label": f"run {run.pk}"}
    if request.headers.get("HX-Request"):
        response = render(request, "tokenizers_app/includes/run_progress.html",
                          {**context, "refresh": True})
        if run.is_finished:
            response["HX-Refresh"] = "true"  # the whole page: versions and chart
        return response
    versions = list(run.versions.select_related("tokenizer").order_by("number"))
    corpora = list(run.corpora.order_by("name"))
    for corpus in corpora:
        corpus.weight = run.weight_of(corpus)
    context.update(versions=versions, corpora=corpora,
                   chart=merge_counts(versions[-1]) if versions else None,
                   evaluations=Evaluation.objects.without_word_tokens().filter(
                       version__in=versions).select_related("version", "corpus")
                   .order_by("corpus__name", "version__number"),
                   compare=reverse("compare") + "?" + urlencode(
                       {"versions": ",".join(v.label for v in versions)}) if versions else None,
                   again=reverse("run_new") + "?" + urlencode(rerun_params(run, corpora)),
                   dependents=run_dependents(run) if context["may_delete"] else [])
    return render(request, "tokenizers_app/run.html", context)


def weighted_line(run: TrainingRun, corpus) -> str:
    """``NAME`` or ``NAME:WEIGHT``: one line of the run form's "More corpora"."""
    weight = run.weight_of(corpus)
    return corpus.name if weight == 1 else f"{corpus.name}:{weight}"


def rerun_params(run: TrainingRun, corpora: list) -> dict:
    """The run form's fields for ``run``'s parameters (``TrainingParameters.public``, as the
    run's API answer and its versions' lineage show them), as GET parameters that prefill it
    ("Run again with changes")."""
    params = run.params.public()
    sweep = ", ".join(map(str, params["sweep"]))
    if run.extends_id is not None:
        return {"extends": run.extends.label, "corpus": corpora[0].name if corpora else "",
                "vocab_size": params["vocab_size"], "min_frequency": params["min_frequency"],
                "sweep": sweep}
    first, *more = corpora or [None]
    common = {"tokenizer": run.tokenizer.name, "corpus": first.name if first else "",
              "weight": run.weight_of(first) if first else 1,
              "more_corpora": "\n".join(weighted_line(run, corpus) for corpus in more),
              "algorithm": params["algorithm"], "vocab_size": params["vocab_size"],
              "min_frequency": params["min_frequency"],
              "special_tokens": "\n".join(params["special_tokens"]), "sweep": sweep}
    own = run.kind.parameter_fields  # the kind's own parameters, as the form's fields
    if "pattern" in own:  # a named pattern, or the custom regex
        pattern = params["pattern"]
        named = pattern in {value for value, _ in PATTERNS if value != "custom"}
        common.update(pattern=pattern if named else "custom",
                      custom_pattern="" if named else pattern)
    return {**common, **{name: params[name] for name in own
                         if name not in ("pattern", "lowercase")},
            **({"lowercase": "on"} if "lowercase" in own and params["lowercase"] else {})}


@login_required
@require_POST
def run_cancel(request, run_id):
    """The user who started the run, or staff; anyone else gets a 403 in words (``guards``)."""
    run = cancel_training_run(run=get_object_or_404(TrainingRun, pk=run_id), user=request.user)
    messages.info(request, f"run {run.pk}: {run.get_status_display()}"
                           + (" (stopping within a second)" if not run.is_finished else ""))
    return redirect("run", run_id=run.pk)


@login_required
@require_POST
def run_delete(request, run_id):
    """Its starter, or staff, once it is finished and made no version."""
    run = get_object_or_404(TrainingRun.objects.select_related("tokenizer"), pk=run_id)
    confirmed(request)
    delete_run(run=run, user=request.user)
    messages.success(request, f"run {run_id} is deleted")
    return redirect("tokenizer", run.tokenizer.name)


def merge_counts(version) -> dict:
    """About ``CHART_POINTS`` merges of the version, evenly over its ranks."""
    return version.merge_rules.count_chart(every=max(1, version.merge_count // CHART_POINTS))
