"""The store is the only door to files: nothing asks which store it has, ``STORAGE_URL`` is read
in one place, and a bad one stops the app at start-up. (No S3 server: these read the code and
the settings.)"""

import re
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from tokenizers_app.storage import Store, get_store, storage_url
from tokenizers_app.storage.local import LocalStore

APP = Path(__file__).resolve().parents[2] / "tokenizers_app"


def sources(folder: Path):
    for path in sorted(folder.rglob("*.py")):
        yield path.relative_to(APP).as_posix(), path.read_text(encoding="utf-8")


def test_no_store_says_which_it_is_and_services_never_ask():
    assert not hasattr(Store, "kind") and not hasattr(LocalStore(), "kind")
    asking = [name for name, text in sources(APP / "services")
              if re.search(r"store(\(\))?\.kind\b|isinstance\([^)]*Store\b|S3Store|LocalStore",
                           text)]
    assert asking == []


def test_storage_url_is_read_in_one_place():
    readers = [name for name, text in sources(APP)
               if re.search(r"settings\.STORAGE_URL|settings, \"STORAGE_URL\"", text)]
    assert readers == ["storage/__init__.py"]


def test_a_storage_url_names_a_bucket_and_its_prefix(settings):
    settings.STORAGE_URL = ""
    assert storage_url() is None and isinstance(get_store(), LocalStore)
    settings.STORAGE_URL = "s3://registry/prod/"
    assert storage_url() == ("s3://registry/prod/", "registry", "prod")
    settings.STORAGE_URL = "https://registry/prod"
    with pytest.raises(ImproperlyConfigured, match="STORAGE_URL must look like s3://BUCKET"):
        get_store()
