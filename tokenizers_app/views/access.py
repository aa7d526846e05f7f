"""Who may see what: anonymous visitors browse read-only unless ``DASHBOARD_ANONYMOUS_READS`` is
off; writes need a signed-in user (``login_required``); staff keep the admin."""

from functools import wraps

from django.conf import settings
from django.contrib.auth.views import redirect_to_login

from ..errors import Invalid


def readable(view):
    """Let anonymous visitors read, unless the setting turns that off."""

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if not settings.DASHBOARD_ANONYMOUS_READS and not request.user.is_authenticated:
            return redirect_to_login(request.get_full_path())
        return view(request, *args, **kwargs)

    return wrapper


def confirmed(request) -> None:
    """A delete form's box must be ticked (``Invalid`` otherwise, said on a page of the site:
    nothing is deleted)."""
    if request.POST.get("confirm") != "on":
        raise Invalid("tick the box to confirm the deletion: nothing was deleted")
