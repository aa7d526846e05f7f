"""The admin: where staff publish, deprecate and annotate versions and move aliases.

Versions, runs and corpora are created by the workflows (commands, API, dashboard), never here;
their content is read-only. Every alias move goes through ``services.move_alias``, which records
it. Any active staff user may use these pages (no per-model permissions needed).
"""

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied

from . import services
from .models import Alias, AliasMove, Corpus, Evaluation, Tokenizer, TokenizerVersion, TrainingRun


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


@admin.register(Corpus)
class CorpusAdmin(StaffAdmin):
    list_display = ["name", "size_bytes", "line_count", "is_evaluation", "created_at"]
    list_filter = ["is_evaluation"]
    search_fields = ["name", "sha256"]
    fields = ["name", "is_evaluation", "original_filename", "file", "size_bytes", "sha256",
              "line_count", "char_count", "scripts", "uploaded_by", "created_at"]
    readonly_fields = [f for f in fields if f not in ("is_evaluation",)]


@admin.register(TrainingRun)
class TrainingRunAdmin(StaffAdmin):
    list_display = ["id", "tokenizer", "vocab_size", "pattern", "status", "stage",
                    "progress_done", "progress_total", "attempt", "created_at"]
    list_filter = ["status"]
    actions = ["cancel_runs"]

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in TrainingRun._meta.get_fields() if f.concrete]

    @admin.action(description="Cancel the selected runs")
    def cancel_runs(self, request, queryset):
        for run in queryset:
            services.cancel_training_run(run=run)
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
    list_display = ["name", "created_at"]
    search_fields = ["name"]
    fields = ["name", "description", "created_at"]
    readonly_fields = ["name", "created_at"]
    inlines = [VersionInline]


@admin.register(TokenizerVersion)
class TokenizerVersionAdmin(StaffAdmin):
    list_display = ["__str__", "status", "lifecycle", "vocab_size", "merge_count", "source",
                    "created_at"]
    list_filter = ["lifecycle", "source", "tokenizer"]
    search_fields = ["tokenizer__name", "digest", "notes"]
    actions = ["publish", "deprecate"]
    fields = ["tokenizer", "number", "status", "lifecycle", "notes", "algorithm", "pattern",
              "special_tokens", "vocab_size", "merge_count", "digest", "source", "source_detail",
              "training_run", "created_by", "created_at"]
    readonly_fields = [f for f in fields if f != "notes"]

    def save_model(self, request, obj, form, change):
        services.annotate_version(version=obj, notes=obj.notes, user=request.user)

    @admin.action(description="Publish the selected versions")
    def publish(self, request, queryset):
        self._set_lifecycle(request, queryset, services.publish_version, "published")

    @admin.action(description="Deprecate the selected versions")
    def deprecate(self, request, queryset):
        self._set_lifecycle(request, queryset, services.deprecate_version, "deprecated")

    def _set_lifecycle(self, request, queryset, service, word):
        try:
            for version in queryset:
                service(version=version, user=request.user)
        except PermissionDenied as exc:
            messages.error(request, str(exc))
            return
        messages.success(request, f"{queryset.count()} version(s) {word}")


class AliasForm(forms.ModelForm):
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
            return services.check_alias_name(self.cleaned_data["name"])
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None

    def clean(self):
        data = super().clean()
        tokenizer_id = data["tokenizer"].pk if data.get("tokenizer") else \
            self.instance.tokenizer_id  # read-only on the change form
        version = data.get("version")
        if tokenizer_id and version and version.tokenizer_id != tokenizer_id:
            raise forms.ValidationError(f"version {version} is not a version of this alias's "
                                        f"tokenizer")
        return data


class AliasMoveInline(admin.TabularInline):
    model = AliasMove
    fk_name = "alias"
    fields = ["from_version", "to_version", "moved_by", "moved_at"]
    readonly_fields = fields
    extra = 0

    def has_add_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Alias)
class AliasAdmin(StaffAdmin):
    """Staff create and move aliases here; ``services.move_alias`` records every move."""

    form = AliasForm
    list_display = ["__str__", "version", "moved_by", "moved_at"]
    inlines = [AliasMoveInline]

    def has_add_permission(self, request):
        return self._is_staff(request)

    def get_readonly_fields(self, request, obj=None):
        return ["tokenizer", "name"] if obj else []

    def save_model(self, request, obj, form, change):
        moved = services.move_alias(version=form.cleaned_data["version"], name=obj.name,
                                    user=request.user)
        obj.pk, obj._state.adding = moved.pk, False
        obj.refresh_from_db()


@admin.register(Evaluation)
class EvaluationAdmin(StaffAdmin):
    list_display = ["version", "corpus", "status", "finished_at"]
    list_filter = ["status"]

    def get_readonly_fields(self, request, obj=None):
        return [f.name for f in Evaluation._meta.get_fields() if f.concrete]
