"""Who calls the API: an API key (``Authorization: Bearer trk_...``) or a signed-in session
(with its CSRF token for writes). Reads, encode included, are open to anonymous callers unless
``API_ANONYMOUS_READS`` is off; writes need a key or a session; staff-only actions check
``is_staff`` in the workflow (403). A caller who passes may send a corpus: only then is its
upload staged (``uploads.allow_upload``)."""

from django.conf import settings
from ninja.security import APIKeyCookie, HttpBearer

from ..models import ApiKey
from ..uploads import allow_upload


class ApiKeyAuth(HttpBearer):
    def authenticate(self, request, token: str):
        user = ApiKey.objects.authenticate(token)
        if user is not None:
            request.user = user
            allow_upload(request)
        return user


class SessionAuth(APIKeyCookie):
    """A signed-in session; its CSRF token is checked (403 without it) only when the request
    carries a session cookie, so callers without one (curl, scripts) are never asked for it."""

    param_name = settings.SESSION_COOKIE_NAME

    def _get_key(self, request):
        if self.param_name not in request.COOKIES:
            return None
        return super()._get_key(request)

    def authenticate(self, request, key):
        """The signed-in user; None at once without a session cookie (``key``), as such a
        request has no session, so no user is read for it (django-ninja calls this for every
        request, cookie or not)."""
        if key is None or not request.user.is_authenticated:
            return None
        allow_upload(request)
        return request.user


class AnonymousReads:
    """Lets anyone read while ``API_ANONYMOUS_READS`` is on (checked on each request)."""

    def __call__(self, request):
        return "anonymous" if settings.API_ANONYMOUS_READS else None


WRITE = [ApiKeyAuth(), SessionAuth()]
READ = [ApiKeyAuth(), SessionAuth(), AnonymousReads()]
