"""The admin: where staff publish, deprecate and annotate versions and move aliases.

Versions, runs and corpora are created by the workflows (commands, API, dashboard), never here;
their content is read-only. Every alias move goes through ``move_alias``, which records
it. Any active staff user may use these pages (no per-model permissions needed).
"""

import json

from django import forms
from django.contrib import admin, messages

from ..bpe.metric_text import reported_text
from ..bpe.metrics import HEADLINE_METRICS, METRICS
from ..errors import REFUSALS, Forbidden
from ..models import (
    Alias,
    AliasMove,
    Corpus,
    Evaluation,
    Tokenizer,
    TokenizerVersion,
    TrainingRun,
)
from ..services.evaluations import request_evaluation
from ..services.runs import cancel_training_run
from ..services.gates import GateRefused, checked_move
from ..services.staff import (
    annotate_version,
    check_alias_name,
    deprecate_version,
    move_alias,
    publish_version,
)
from ..templatetags.tokens import tokens


@admin.display(description="special tokens")
def special_tokens_shown(row):
    """A run's or a version's special tokens as the pages show them (``<U+202E>``, ``·``)."""
    return tokens(row.special_tokens)


@admin.display(description="parameters")
def parameters_shown(run):
    """A run's parameters but its special tokens (``special_tokens_shown`` shows them)."""
    shown = {k: v for k, v in run.params.public().items() if k != "special_tokens"}
    return json.dumps(shown, ensure_ascii=True)


class StaffAdmin(admin.ModelAdmin):
    """Readable and changeable by any active staff user; nothing is added or deleted here."""

    def _is_staff(self, request) -> bool:
        return request.user.is_active and request.user.is_staff

    def has_module_permission(self, request):
        return self._is_staff(request)

    def has_view_permission(self, request, obj=None):
        return self._is_staff(request)

    def has_change_permission(self, request, obj=None):
        return self._is_staff(request)

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class StaffInline(admin.TabularInline):
    """Read-only rows shown to any active staff user."""

    extra = 0
    can_delete = False

    def has_view_permission(self, request, obj=None):
        return request.user.is_active and request.user.is_staff

    def has_change_permission(self, request, obj=None):
        return False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(TrainingRun)
class TrainingRunAdmin(StaffAdmin):
    list_display = ["id", "tokenizer", "vocab_size", "pattern", "status", "stage",
                    "progress_done", "progress_total", "attempt", "created_at"]
    list_filter = ["status"]
    actions = ["cancel_runs"]
    exclude = ["parameters"]  # shown safely instead: the special tokens apart

    def get_readonly_fields(self, request, obj=None):
        fields = []
        for f in TrainingRun._meta.get_fields():
            if f.concrete:
                fields += ([parameters_shown, special_tokens_shown] if f.name == "parameters"
                           else [f.name])
        return fields

    @admin.action(description="Cancel the selected runs")
    def cancel_runs(self, request, queryset):
        for run in queryset:
            cancel_training_run(run=run, user=request.user)
        messages.success(request, f"asked {queryset.count()} run(s) to stop")


class VersionInline(admin.TabularInline):
    model = TokenizerVersion
    fields = ["number", "status", "lifecycle", "vocab_size", "source", "created_at"]
    readonly_fields = fields
    extra = 0
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Tokenizer)
class TokenizerAdmin(StaffAdmin):
    list_display = ["name", "owner", "created_at"]
    search_fields = ["name"]
    fields = ["name", "owner", "description", "created_at"]  # owner: who adds versions
    readonly_fields = ["name", "created_at"]
    inlines = [VersionInline]


def metric_column(name: str):
    """An admin column showing one metric of an evaluation: its unit in the heading, once, and
    the bare number in each cell ("Compression ratio (bytes/token)" over "4.604")."""
    label, unit, _ = METRICS[name]

    @admin.display(description=f"{label} ({unit})" if unit else label)
    def column(admin_or_evaluation, evaluation=None):  # a function, or a method of an admin
        evaluation = evaluation or admin_or_evaluation
        return reported_text(evaluation.metrics, name, number_only=True)

    return column


def with_metric_columns(cls):
    """Give an admin class a read-only ``m_<metric>`` column per metric."""
    for name in METRICS:
        setattr(cls, f"m_{name}", metric_column(name))
    return cls


@with_metric_columns
class EvaluationInline(StaffInline):
    model = Evaluation
    fields = ["corpus", "status", *(f"m_{name}" for name in HEADLINE_METRICS), "finished_at"]
    readonly_fields = fields


class VersionAliasInline(StaffInline):
    model = Alias
    fk_name = "version"
    fields = ["name", "moved_by", "moved_at"]
    readonly_fields = fields
    verbose_name_plural = "aliases pointing here (move them under Aliases)"


@admin.register(TokenizerVersion)
class TokenizerVersionAdmin(StaffAdmin):
    list_display = ["__str__", "status", "lifecycle", "vocab_size", "merge_count", "source",
                    "created_at"]
    list_filter = ["lifecycle", "source", "tokenizer"]
    search_fields = ["tokenizer__name", "digest", "notes"]
    actions = ["publish", "deprecate", "evaluate"]
    fields = ["tokenizer", "number", "status", "lifecycle", "notes", "algorithm", "pattern",
              "split", "engine_description", special_tokens_shown, "vocab_size", "merge_count",
              "digest", "source",
              "source_detail", "training_run", "created_by", "created_at"]
    readonly_fields = [f for f in fields if f != "notes"]
    inlines = [EvaluationInline, VersionAliasInline]

    def save_model(self, request, obj, form, change):
        annotate_version(version=obj, notes=obj.notes, user=request.user)

    @admin.action(description="Publish the selected versions")
    def publish(self, request, queryset):
        self._set_lifecycle(request, queryset, publish_version, "published")

    @admin.action(description="Deprecate the selected versions")
    def deprecate(self, request, queryset):
        self._set_lifecycle(request, queryset, deprecate_version, "deprecated")

    @admin.action(description="Evaluate the selected versions on every evaluation corpus")
    def evaluate(self, request, queryset):
        for version in queryset.ready():
            for corpus in Corpus.objects.for_evaluation():
                request_evaluation(version=version, corpus=corpus)
        messages.success(request, "queued the evaluations not yet done (see Evaluations)")

    def _set_lifecycle(self, request, queryset, service, word):
        try:
            for version in queryset:
                service(version=version, user=request.user)
        except Forbidden as exc:
            messages.error(request, str(exc))
            return
        messages.success(request, f"{queryset.count()} version(s) {word}")


class AliasForm(forms.ModelForm):
    force_reason = forms.CharField(required=False, help_text=(
        "a gated alias refuses a move that fails its checks unless you say why"))

    class Meta:
        model = Alias
        fields = ["tokenizer", "name", "version"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "version" in self.fields:
            versions = TokenizerVersion.objects.ready()
            if self.instance.pk:  # moving an alias: only versions of its own tokenizer
                versions = versions.filter(tokenizer_id=self.instance.tokenizer_id)
            self.fields["version"].queryset = versions

    def clean_name(self):
        try:
            return check_alias_name(self.cleaned_data["name"])
        except REFUSALS as exc:
            raise forms.ValidationError(str(exc)) from None

    def clean(self):
        data = super().clean()
        tokenizer_id = data["tokenizer"].pk if data.get("tokenizer") else \
            self.instance.tokenizer_id  # read-only on the change form
        version = data.get("version")
        if tokenizer_id and version and version.tokenizer_id != tokenizer_id:
            raise forms.ValidationError(f"version {version} is not a version of this alias's "
                                        f"tokenizer")
        if self.instance.pk and version:  # a gated alias: its refusal is the form's error
            try:
                checked_move(alias=Alias.objects.get(pk=self.instance.pk), target=version,
                             force_reason=data.get("force_reason", ""))
            except GateRefused as refused:
                raise forms.ValidationError(str(refused)) from None
        return data


class AliasMoveInline(StaffInline):
    """The alias's history, each row titled by its move (``AliasMove.__str__``)."""

    model = AliasMove
    fk_name = "alias"
    fields = ["from_version", "to_version", "moved_by", "moved_at", "gate_checks",
              "forced_reason"]
    readonly_fields = fields


@admin.register(Alias)
class AliasAdmin(StaffAdmin):
    """Staff create and move aliases here; ``move_alias`` records every move."""

    form = AliasForm
    list_display = ["__str__", "version", "moved_by", "moved_at"]
    inlines = [AliasMoveInline]

    def has_add_permission(self, request):
        return self._is_staff(request)

    def get_readonly_fields(self, request, obj=None):
        return ["tokenizer", "name"] if obj else []

    def save_model(self, request, obj, form, change):
        moved = move_alias(version=form.cleaned_data["version"], name=obj.name,
                           user=request.user,
                           force_reason=form.cleaned_data.get("force_reason", ""))
        obj.pk, obj._state.adding = moved.pk, False
        obj.refresh_from_db()


@admin.register(Evaluation)
@with_metric_columns
class EvaluationAdmin(StaffAdmin):
    list_display = ["version", "corpus", "status",
                    *(f"m_{name}" for name in HEADLINE_METRICS), "finished_at"]
    list_filter = ["status", "corpus"]
    list_select_related = ["version__tokenizer", "corpus"]
    fields = ["version", "corpus", "status", "error", *(f"m_{name}" for name in METRICS),
              "created_at", "started_at", "finished_at"]
    readonly_fields = fields
