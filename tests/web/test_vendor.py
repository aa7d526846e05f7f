"""The vendored JavaScript: each file is what VENDOR.json records (version and sha384), and the
pages load it with that integrity hash from our own static files (no CDN)."""

import base64
import hashlib
import json
from pathlib import Path

import pytest

VENDOR = Path(__file__).resolve().parents[2] / "tokenizers_app" / "static" / "tokenizers_app" / \
    "vendor"


def test_every_vendored_file_matches_its_recorded_hash_and_size():
    manifest = json.loads((VENDOR / "VENDOR.json").read_text())
    assert set(manifest) == {"htmx", "chart.js", "axe-core"}
    for name, entry in manifest.items():
        data = (VENDOR / entry["file"]).read_bytes()
        digest = "sha384-" + base64.b64encode(hashlib.sha384(data).digest()).decode()
        assert (digest, len(data)) == (entry["sha384"], entry["bytes"]), name
        assert entry["npm_integrity"].startswith("sha512-") and entry["version"] in entry["file"]
    assert manifest["htmx"]["version"].startswith("2.0.")


@pytest.mark.django_db
def test_pages_load_htmx_from_our_static_files_with_its_integrity(client):
    manifest = json.loads((VENDOR / "VENDOR.json").read_text())
    html = client.get("/").content.decode()
    assert f'integrity="{manifest["htmx"]["sha384"]}"' in html
    assert "/static/tokenizers_app/vendor/htmx-2.0.11.min.js" in html and "https://" not in html
    assert client.get("/static/tokenizers_app/vendor/htmx-2.0.11.min.js").status_code == 200
