"""API keys: shown once at creation, stored as a sha256 (a key is 32 random bytes, so a fast
hash is the right one: nothing to guess), revocable, with the time it was last used."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone

PREFIX = "trk_"
TOUCH_EVERY = timedelta(minutes=1)  # last_used_at is written at most this often


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class ApiKeyQuerySet(models.QuerySet):
    def create_key(self, user, name: str = "") -> tuple[ApiKey, str]:
        """A new key for ``user``: the record, and the key itself (shown this once)."""
        key = PREFIX + secrets.token_urlsafe(32)
        return self.create(user=user, name=name[:100], prefix=key[:12],
                           hashed=hash_key(key)), key

    def authenticate(self, key: str):
        """The active user of a valid, unrevoked key, or None; notes when it was used."""
        found = (self.filter(hashed=hash_key(key), revoked_at=None, user__is_active=True)
                 .select_related("user").first())
        if found is None:
            return None
        now = timezone.now()
        if found.last_used_at is None or now - found.last_used_at > TOUCH_EVERY:
            ApiKey.objects.filter(pk=found.pk).update(last_used_at=now)
        return found.user


class ApiKey(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="api_keys")
    name = models.CharField(max_length=100, blank=True, help_text="what the key is for")
    prefix = models.CharField(max_length=12, help_text="the key's first characters, to tell "
                                                       "keys apart")
    hashed = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = ApiKeyQuerySet.as_manager()

    class Meta:
        verbose_name = "API key"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.user}{', revoked' if self.revoked_at else ''})"

    def revoke(self) -> None:
        if self.revoked_at is None:
            self.revoked_at = timezone.now()
            ApiKey.objects.filter(pk=self.pk).update(revoked_at=self.revoked_at)
