"""The app's pages. The dashboard and the API come later; for now an index and a health check."""

from django.urls import path

from . import views

urlpatterns = [
    path("", views.index, name="index"),
    path("health", views.health, name="health"),
]
