"""Staff actions on a version's page (``services/staff``): move an alias to the version, and
publish it. Anyone else gets a 403 in words (``guards``)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from ..errors import Invalid
from ..services.gates import GateRefused, find_alias, pin_golden, set_gate
from ..services.permissions import check_staff
from ..services.staff import move_alias, publish_version
from .versions import _version


@login_required
@require_POST
def version_alias(request, name, ref):
    version = _version(name, ref)
    try:
        alias = move_alias(version=version, name=request.POST.get("alias", "").strip(),
                           user=request.user, force_reason=request.POST.get("force_reason", ""))
    except (Invalid, GateRefused) as refused:  # said on the page, nothing moved
        messages.error(request, str(refused))
    else:
        last = alias.moves.order_by("-moved_at", "-id").first()
        forced = f" (forced past the gate: {last.forced_reason})" if last.forced_reason else ""
        messages.success(request, f"alias {alias.name} now points at {version.label}{forced}")
    return redirect("version", version.tokenizer.name, version.number)


@login_required
@require_POST
def version_publish(request, name, ref):
    version = publish_version(version=_version(name, ref), user=request.user)
    messages.success(request, f"{version.label} is published")
    return redirect("version", version.tokenizer.name, version.number)


@login_required
@require_POST
def alias_gate(request, name, alias):
    """Set (a tolerance in %) or lift (empty) an alias's gate: staff only."""
    check_staff(request.user, "set alias gates")
    found = find_alias(tokenizer_name=name, name=alias)
    raw = request.POST.get("tolerance", "").strip()
    try:
        tolerance = None if not raw else float(raw) / 100
    except ValueError:
        messages.error(request, f"tolerance {raw!r} is not a number of percent")
    else:
        try:
            set_gate(alias=found, tolerance=tolerance, user=request.user)
        except Invalid as refused:
            messages.error(request, str(refused))
        else:
            messages.success(request, f"{found} is gated with a tolerance of {raw}%"
                             if raw else f"{found} has no gate now")
    back = request.POST.get("back", "")
    return redirect("version", name, back if back.isdigit() else found.version.number)


@login_required
@require_POST
def golden_pin(request, name, ref):
    """Pin a golden text with this version's ids: the tokenizer's owner or staff."""
    version = _version(name, ref)
    try:
        golden = pin_golden(version=version, text=request.POST.get("text", ""),
                            user=request.user)
    except Invalid as refused:
        messages.error(request, str(refused))
    else:
        messages.success(request, f"golden pinned from {version.label}: {len(golden.ids)} ids")
    return redirect("version", version.tokenizer.name, version.number)
