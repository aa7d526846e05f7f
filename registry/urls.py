"""URL wiring: the admin, and the app's own pages."""

from django.conf import settings
from django.contrib import admin
from django.urls import include, path, re_path
from django.views.static import serve

urlpatterns = [
    path("admin/", admin.site.urls),
    path("", include("tokenizers_app.urls")),
]

if settings.SERVE_STATIC and not settings.DEBUG:
    urlpatterns.append(re_path(r"^static/(?P<path>.*)$", serve,
                               {"document_root": settings.STATIC_ROOT}))
