"""URL wiring: the admin, and the app's own pages (static files: whitenoise, in settings)."""

from django.contrib import admin
from django.shortcuts import redirect
from django.templatetags.static import static
from django.urls import include, path, re_path

from tokenizers_app.api import api
from tokenizers_app.api.errors import unknown_address

handler404 = "tokenizers_app.api.errors.not_found"  # JSON under /api/, the page elsewhere

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", api.urls),
    re_path(r"^api/", unknown_address),  # any other /api/ address: a JSON 404, not the page
    # browsers ask for /favicon.ico on pages that link none (JSON, files): the page's own icon
    path("favicon.ico", lambda request: redirect(static("tokenizers_app/favicon.svg"))),
    path("", include("tokenizers_app.urls")),
]
