"""The base of every JSON request body: a field the operation does not take is a 422 naming it
(``extra_forbidden``), never silently dropped."""

from ninja import Schema
from pydantic import ConfigDict


class Body(Schema):
    model_config = ConfigDict(extra="forbid")


FORM_FIELD_UNKNOWN = "Extra inputs are not permitted"
CSRF_FIELD = "csrfmiddlewaretoken"  # a signed-in session's form sends its CSRF token so


def unknown_form_fields(request, known: set[str]) -> list[dict]:
    """The 422 details (as the schemas give them) of a multipart form's fields and files that the
    operation does not take (besides a session's CSRF token)."""
    sent = [*request.POST.keys(), *request.FILES.keys()]
    return [{"type": "extra_forbidden", "loc": ["form", name], "msg": FORM_FIELD_UNKNOWN}
            for name in dict.fromkeys(sent) if name not in known and name != CSRF_FIELD]
