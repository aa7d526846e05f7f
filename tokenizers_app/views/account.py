"""``/account/``: a signed-in user's API keys. They create one (shown once, on the answer to
the POST: only its hash is stored, as for the keys staff make in the admin), name it, see when
each was last used, and revoke it. Staff manage everyone's keys in the admin."""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from ..errors import Conflict
from ..models import ApiKey

MAX_ACTIVE_KEYS = 20  # unrevoked keys per user


class KeyForm(forms.Form):
    name = forms.CharField(max_length=100, required=False, label="Name",
                           help_text="what the key is for (a script, a CI job, ...)")


@login_required
@never_cache
def account(request):
    return _page(request, KeyForm())


@login_required
@require_POST
@never_cache
def key_create(request):
    """The new key, on this answer only (never in a redirect, a message or the log)."""
    form = KeyForm(request.POST)
    if not form.is_valid():
        return _page(request, form, status=400)
    if ApiKey.objects.filter(user=request.user, revoked_at=None).count() >= MAX_ACTIVE_KEYS:
        raise Conflict(f"you hold {MAX_ACTIVE_KEYS} keys that are not revoked, the most a user "
                       f"may: revoke one you no longer use first")
    record, key = ApiKey.objects.create_key(request.user, form.cleaned_data["name"])
    return _page(request, KeyForm(), new_key=key, new_record=record, status=201)


@login_required
@require_POST
def key_revoke(request, key_id):
    """Only the key's holder, here (anyone else's key is not found)."""
    record = get_object_or_404(ApiKey, pk=key_id, user=request.user)
    record.revoke()
    messages.success(request, f"key {record.prefix}… is revoked: requests with it now get 401")
    return redirect("account")


def _page(request, form, status=200, **new):
    keys = ApiKey.objects.filter(user=request.user).order_by("revoked_at", "-created_at")
    return render(request, "tokenizers_app/account.html",
                  {"form": form, "keys": keys, **new}, status=status)
