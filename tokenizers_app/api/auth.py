"""Who calls the API: an API key (``Authorization: Bearer trk_...``) or a signed-in session
(with its CSRF token for writes). Reads, encode included, are open to anonymous callers unless
``API_ANONYMOUS_READS`` is off; writes need a key or a session; staff-only actions check
``is_staff`` in the workflow (403)."""

from django.conf import settings
from ninja.security import HttpBearer, django_auth

from ..models import ApiKey


class ApiKeyAuth(HttpBearer):
    def authenticate(self, request, token: str):
        user = ApiKey.objects.authenticate(token)
        if user is not None:
            request.user = user
        return user


class AnonymousReads:
    """Lets anyone read while ``API_ANONYMOUS_READS`` is on (checked on each request)."""

    def __call__(self, request):
        return "anonymous" if settings.API_ANONYMOUS_READS else None


WRITE = [ApiKeyAuth(), django_auth]
READ = [ApiKeyAuth(), django_auth, AnonymousReads()]
