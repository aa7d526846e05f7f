"""URL wiring: the admin, and the app's own pages (static files: whitenoise, in settings)."""

from django.contrib import admin
from django.urls import include, path

from tokenizers_app.api import api

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", api.urls),
    path("", include("tokenizers_app.urls")),
]
