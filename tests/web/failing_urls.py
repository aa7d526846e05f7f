"""The registry's URLs and one view that fails, for the tests of what a 500 shows and logs."""

from django.urls import path

from registry.urls import urlpatterns as registry_urlpatterns

FAILURE = "a forced failure, for the test"


def fails(request):
    raise RuntimeError(FAILURE)


urlpatterns = [path("fails/", fails), *registry_urlpatterns]
