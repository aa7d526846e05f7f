"""Staff actions on a version's page (``services/staff``): move an alias to the version, and
publish it. Anyone else gets a 403 in words (``guards``)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from ..errors import Invalid
from ..services.staff import move_alias, publish_version
from .versions import _version


@login_required
@require_POST
def version_alias(request, name, ref):
    version = _version(name, ref)
    try:
        alias = move_alias(version=version, name=request.POST.get("alias", "").strip(),
                           user=request.user)
    except Invalid as refused:  # a bad alias name: said on the page, nothing moved
        messages.error(request, str(refused))
    else:
        messages.success(request, f"alias {alias.name} now points at {version.label}")
    return redirect("version", version.tokenizer.name, version.number)


@login_required
@require_POST
def version_publish(request, name, ref):
    version = publish_version(version=_version(name, ref), user=request.user)
    messages.success(request, f"{version.label} is published")
    return redirect("version", version.tokenizer.name, version.number)
