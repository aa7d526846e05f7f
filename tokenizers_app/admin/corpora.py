"""The corpora's admin: read-only facts, and the evaluation flag, switched through
``set_evaluation`` (made an evaluation corpus, every ready version is evaluated on it)."""

from django.contrib import admin, messages
from django.template.defaultfilters import filesizeformat
from django.urls import reverse
from django.utils.html import format_html

from ..models import Corpus
from ..services.corpora import set_evaluation
from .versions import StaffAdmin


@admin.register(Corpus)
class CorpusAdmin(StaffAdmin):
    list_display = ["name", "size_bytes", "line_count", "is_evaluation", "created_at"]
    list_filter = ["is_evaluation"]
    search_fields = ["name", "sha256"]
    fields = ["name", "is_evaluation", "original_filename", "stored_file", "size_bytes",
              "sha256", "line_count", "char_count", "scripts", "uploaded_by", "created_at"]
    readonly_fields = [f for f in fields if f not in ("is_evaluation",)]
    actions = ["evaluate_everything"]

    def save_model(self, request, obj, form, change):  # made one, it evaluates what exists
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
