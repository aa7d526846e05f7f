"""The dashboard's URLs: stable and shareable (a comparison is a link)."""

from django.contrib.auth import views as auth_views
from django.urls import path, register_converter

from .models import ALIAS_PATTERN
from .views import (account, compare, corpora, diffs, health, imports, leaderboard, metrics,
                    parallel, parallel_line, runs, search, staff, versions)


class RefConverter:
    """A version number or an alias name: ``3``, ``production``."""

    regex = rf"[0-9]+|{ALIAS_PATTERN}"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value) -> str:
        return str(value)


register_converter(RefConverter, "ref")
NAME = "<str:name>"

urlpatterns = [
    path("", leaderboard.index, name="index"),
    path("health", health.health, name="health"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("account/", account.account, name="account"),
    path("account/keys", account.key_create, name="account_key_create"),
    path("account/keys/<int:key_id>/revoke", account.key_revoke, name="account_key_revoke"),
    path("corpora/", corpora.corpus_list, name="corpora"),
    path("corpora/upload/", corpora.corpus_upload, name="corpus_upload"),
    path(f"corpora/{NAME}/", corpora.corpus_detail, name="corpus"),
    path(f"corpora/{NAME}/evaluation", corpora.corpus_evaluation, name="corpus_evaluation"),
    path(f"corpora/{NAME}/file", corpora.corpus_file, name="corpus_file"),
    path(f"corpora/{NAME}/delete", corpora.corpus_delete, name="corpus_delete"),
    path("parallel/", parallel.parallel_list, name="parallel_sets"),
    path("parallel/upload/", parallel.parallel_upload, name="parallel_upload"),
    path(f"parallel/{NAME}/", parallel.parallel_detail, name="parallel_set"),
    path("runs/", runs.run_list, name="runs"),
    path("runs/new/", runs.run_new, name="run_new"),
    path("runs/<int:run_id>/", runs.run_detail, name="run"),
    path("runs/<int:run_id>/cancel", runs.run_cancel, name="run_cancel"),
    path("runs/<int:run_id>/delete", runs.run_delete, name="run_delete"),
    path("tokenizers/", leaderboard.tokenizer_list, name="tokenizers"),
    path("tokenizers/import/", imports.tokenizer_import, name="tokenizer_import"),
    path(f"tokenizers/{NAME}/", versions.tokenizer_detail, name="tokenizer"),
    path(f"tokenizers/{NAME}/delete", versions.tokenizer_delete, name="tokenizer_delete"),
    path(f"tokenizers/{NAME}/<ref:ref>/", versions.version_detail, name="version"),
    path(f"tokenizers/{NAME}/<ref:ref>/evaluate", versions.version_evaluate, name="evaluate"),
    path(f"tokenizers/{NAME}/<ref:ref>/evaluate/cancel", versions.version_evaluation_cancel,
         name="evaluation_cancel"),
    path(f"tokenizers/{NAME}/<ref:ref>/vocab/", versions.version_vocab, name="vocab"),
    path(f"tokenizers/{NAME}/<ref:ref>/merges/", versions.version_merges, name="merges"),
    path(f"tokenizers/{NAME}/<ref:ref>/tokens/<int:token_id>/", versions.token_detail,
         name="token"),
    path(f"tokenizers/{NAME}/<ref:ref>/download/<str:format>/", versions.version_download,
         name="download"),
    path(f"tokenizers/{NAME}/<ref:ref>/alias", staff.version_alias, name="version_alias"),
    path(f"tokenizers/{NAME}/<ref:ref>/publish", staff.version_publish, name="version_publish"),
    path(f"tokenizers/{NAME}/<ref:ref>/goldens", staff.golden_pin, name="golden_pin"),
    path(f"tokenizers/{NAME}/aliases/<str:alias>/gate", staff.alias_gate, name="alias_gate"),
    path("compare/", compare.compare, name="compare"),
    path("diff/", diffs.diff, name="diff"),
    path("metrics/", metrics.glossary, name="metrics"),
    path("search/", search.search, name="search"),
    path("playground/", parallel_line.playground_or_line, name="playground"),
]
