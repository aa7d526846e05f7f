"""Data and callers for the API tests: the dashboard's registry (two evaluated versions of
``prose-bpe``), a member's key, a staff key and a revoked key."""

import pytest


@pytest.fixture
def registry(db, settings, tmp_path):
    from tests.registry.helpers import build_registry_data
    from tokenizers_app.models import ApiKey

    data = build_registry_data(settings, tmp_path)
    _, data["member_key"] = ApiKey.objects.create_key(data["member"], "ci")
    _, data["staff_key"] = ApiKey.objects.create_key(data["staff"], "release")
    revoked, data["revoked_key"] = ApiKey.objects.create_key(data["member"], "old")
    revoked.revoke()
    return data


def bearer(key: str) -> dict:
    return {"HTTP_AUTHORIZATION": f"Bearer {key}"}


@pytest.fixture
def client():
    """A client that is held to CSRF checks as a browser is (Django's test client skips them)."""
    from django.test import Client

    return Client(enforce_csrf_checks=True)
