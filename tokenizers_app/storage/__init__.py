"""The registry's files (corpora, count parts, rendered downloads) behind one interface, so that
web and workers may share nothing but the database, the broker and the store.

``get_store()`` answers the store of this process's settings: ``MEDIA_ROOT`` on local disk by
default (``LocalStore``), or an S3-compatible bucket when ``STORAGE_URL=s3://BUCKET/PREFIX``
(``S3Store``: boto3). ``STORAGE_URL`` is read here only (``storage_url``); the app refuses at
start-up one that names no bucket. Names are ``/``-separated paths relative
to the store's root (``corpora/<sha256>.txt``). Every write is whole or nothing: a ``Writer``
publishes its object only on ``commit`` (a local ``.part`` file renamed into place, or an S3
multipart upload completed); a killed writer leaves a ``.part`` file or an unfinished multipart
upload, which ``sweep`` removes, never an object under the name a row holds. A missing object
raises ``FileNotFoundError``; a store that does not answer ``errors.StoreUnavailable`` (503).

``local_copy`` (``storage.cache``) gives a local file for code that needs a path (training
counts a whole file in several processes), kept in a bounded cache by sha256
(``STORAGE_CACHE_BYTES``).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from .base import Entry, ObjectRanges, Store, Writer
from .cache import local_copy
from .local import LocalStore

__all__ = ["Entry", "ObjectRanges", "Store", "Writer", "get_store", "local_copy", "store_check",
           "storage_url"]

_S3_STORES: dict[tuple, Store] = {}


def storage_url() -> tuple[str, str, str] | None:
    """``STORAGE_URL`` as ``(url, bucket, prefix)``, or None for ``MEDIA_ROOT``: the one place
    that reads it. ``s3://registry/prod`` -> ``("s3://registry/prod", "registry", "prod")``;
    a URL that names no S3 bucket is ``ImproperlyConfigured``."""
    url = getattr(settings, "STORAGE_URL", "").strip()
    if not url:
        return None
    parts = urlsplit(url)
    if parts.scheme != "s3" or not parts.netloc:
        raise ImproperlyConfigured(f"STORAGE_URL must look like s3://BUCKET/PREFIX (a bucket "
                                   f"name, then an optional prefix), got {url!r}")
    return url, parts.netloc, parts.path.strip("/")


def get_store() -> Store:
    """The store of the current settings (read on each call: tests change them)."""
    bucket = storage_url()
    if bucket is None:
        return LocalStore()
    options = dict(getattr(settings, "STORAGE_OPTIONS", {}))
    key = (bucket, tuple(sorted(options.items())), settings.STORAGE_PART_BYTES,
           settings.STORAGE_TIMEOUT_SECONDS)
    store = _S3_STORES.get(key)
    if store is None:
        from .s3 import S3Store  # boto3 is imported only when a bucket is configured

        store = _S3_STORES[key] = S3Store(*bucket, options, settings.STORAGE_PART_BYTES,
                                           settings.STORAGE_TIMEOUT_SECONDS)
    return store


def store_check() -> list[str]:
    """Problems with the configured store, in words (``manage.py check``): none for local disk."""
    from ..errors import StoreUnavailable

    try:
        get_store().check()
    except StoreUnavailable as exc:
        return [exc.internal]  # the operator's command: the address and bucket too
    return []
