"""The corpora's admin: read-only facts, and the evaluation flag, switched through
``set_evaluation`` (made an evaluation corpus, every ready version is evaluated on it)."""

from django import forms
from django.contrib import admin, messages
from django.template.defaultfilters import filesizeformat
from django.urls import reverse
from django.utils.html import format_html

from ..errors import Invalid
from ..models import Corpus, check_language
from ..services.corpora import set_evaluation, set_language
from .versions import StaffAdmin


class CorpusForm(forms.ModelForm):
    class Meta:
        model = Corpus
        fields = ["language", "is_evaluation"]

    def clean_language(self):
        try:
            return check_language(self.cleaned_data["language"])
        except Invalid as refused:
            raise forms.ValidationError(str(refused)) from None


@admin.register(Corpus)
class CorpusAdmin(StaffAdmin):
    form = CorpusForm
    list_display = ["name", "language", "size_bytes", "line_count", "is_evaluation", "created_at"]
    list_filter = ["is_evaluation", "language"]
    search_fields = ["name", "sha256"]
    fields = ["name", "language", "is_evaluation", "original_filename", "stored_file", "size_bytes",
              "sha256", "line_count", "char_count", "scripts", "uploaded_by", "created_at"]
    readonly_fields = [f for f in fields if f not in ("is_evaluation", "language")]
    actions = ["evaluate_everything"]

    def save_model(self, request, obj, form, change):  # made one, it evaluates what exists
        if "language" in form.changed_data:
            set_language(corpus=obj, language=obj.language, user=request.user)
        set_evaluation(corpus=obj, is_evaluation=obj.is_evaluation, user=request.user)

    @admin.action(description="Make evaluation corpora: evaluate every ready version on them")
    def evaluate_everything(self, request, queryset):
        for corpus in queryset:
            set_evaluation(corpus=corpus, is_evaluation=True, user=request.user)
        messages.success(request, "every ready version is queued for evaluation on them")

    @admin.display(description="file")
    def stored_file(self, corpus):
        """The file through the access-checked download (the media folder is never served)."""
        return format_html('<a href="{}">{}</a> ({})', reverse("corpus_file", args=[corpus.name]),
                           f"{corpus.name}.txt", filesizeformat(corpus.size_bytes))
