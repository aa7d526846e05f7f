"""``/account/`` (issue 33): a member creates an API key (shown once, stored as its hash),
names it, sees when it was last used, uses it, and revokes it."""

import json
import re

import pytest

from tokenizers_app.models import ApiKey
from tokenizers_app.models.api_keys import hash_key

pytestmark = pytest.mark.django_db


def create(client, name="nightly") -> tuple[str, str]:
    response = client.post("/account/keys", {"name": name})
    assert response.status_code == 201, response.content[:2000]
    html = response.content.decode()
    return re.search(r'<code class="wrap" id="new-key">(trk_[^<]+)</code>', html).group(1), html


def test_a_member_creates_a_key_seen_once_and_stored_as_its_hash(client, registry_data):
    member = registry_data["member"]
    client.force_login(member)
    key, html = create(client)
    record = ApiKey.objects.get(user=member)
    assert record.name == "nightly" and record.hashed == hash_key(key)
    assert key not in record.hashed and record.prefix == key[:12]
    assert "copy it now, it is not shown again" in html
    later = client.get("/account/").content.decode()
    assert key not in later and f"{record.prefix}…" in later and "nightly" in later
    assert "never" in later  # not used yet


def test_the_key_writes_as_its_member_and_its_use_is_shown(client, registry_data):
    client.force_login(registry_data["member"])
    key, _ = create(client)
    client.logout()
    answer = client.post("/api/runs", json.dumps({}), content_type="application/json",
                         HTTP_AUTHORIZATION=f"Bearer {key}")
    assert answer.status_code == 422  # let in, then told what is missing (not 401)
    client.force_login(registry_data["member"])
    row = client.get("/account/").content.decode().split('id="api-keys"', 1)[1]
    assert "never" not in row.split("</tr>", 2)[1]


def test_a_member_revokes_their_key_and_it_no_longer_works(client, registry_data):
    client.force_login(registry_data["member"])
    key, _ = create(client)
    record = ApiKey.objects.get()
    response = client.post(f"/account/keys/{record.pk}/revoke", follow=True)
    assert "is revoked: requests with it now get 401" in response.content.decode()
    assert ApiKey.objects.get().revoked_at is not None
    client.logout()
    answer = client.post("/api/runs", json.dumps({}), content_type="application/json",
                         HTTP_AUTHORIZATION=f"Bearer {key}")
    assert answer.status_code == 401


def test_nobody_else_sees_or_revokes_a_members_key(client, registry_data):
    client.force_login(registry_data["member"])
    create(client, "mine")
    record = ApiKey.objects.get()
    client.force_login(registry_data["staff"])
    assert "mine" not in client.get("/account/").content.decode()
    assert client.post(f"/account/keys/{record.pk}/revoke").status_code == 404
    assert ApiKey.objects.get().revoked_at is None  # staff revoke others' keys in the admin


def test_the_top_bar_links_the_account_page(client, registry_data):
    client.force_login(registry_data["member"])
    assert '<a href="/account/" title="Your account and API keys">member</a>' in \
        client.get("/").content.decode()


def test_a_key_name_too_long_is_refused_beside_its_field(client, registry_data):
    client.force_login(registry_data["member"])
    response = client.post("/account/keys", {"name": "x" * 101})
    assert response.status_code == 400 and not ApiKey.objects.exists()
    assert "at most 100 characters" in response.content.decode()


def test_keys_beyond_the_cap_are_refused_until_one_is_revoked(client, registry_data,
                                                            monkeypatch):
    monkeypatch.setattr("tokenizers_app.views.account.MAX_ACTIVE_KEYS", 2)
    client.force_login(registry_data["member"])
    create(client, "one")
    create(client, "two")
    refused = client.post("/account/keys", {"name": "three"})
    assert refused.status_code == 409 and "revoke one you no longer use" in \
        refused.content.decode()
    ApiKey.objects.filter(name="one").get().revoke()
    create(client, "three")
