"""``body_gate``: bodies refused before they are read where no file is taken, files in such forms
never staged, imports refused unread without a caller (the deployment test measures the temp
folder under gunicorn; these check the answers in this process)."""

import io
from unittest import mock

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_a_body_over_the_form_limit_is_refused_unread_where_no_file_is_taken(settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000  # the limit: this and 1 MB of framing
    for path in ("/accounts/login/", "/runs/new/", "/playground/"):
        answer = Client().post(path, "x=" + "y" * 1_100_000,
                               content_type="application/x-www-form-urlencoded")
        assert answer.status_code == 413, path
        assert "takes a form or JSON of at most 1058576 bytes" in answer.content.decode()
    api = Client().post("/api/runs", "{}" + " " * 1_100_000, content_type="application/json")
    assert api.status_code == 413 and "no file" in api.json()["detail"]


def test_a_file_sent_where_none_is_taken_is_dropped_not_staged(settings, tmp_path):
    """(A staged file is removed when the request ends: the test counts the temporary files
    Django's upload handler opens while it runs.)"""
    import django.core.files.uploadedfile as uploaded

    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path)
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 10  # any file would go to the temp folder
    opened = []
    real = uploaded.tempfile.NamedTemporaryFile

    def counted(*args, **kwargs):
        opened.append(kwargs.get("dir"))
        return real(*args, **kwargs)

    upload = io.BytesIO(b"z" * 100_000)
    upload.name = "big.bin"
    with mock.patch.object(uploaded.tempfile, "NamedTemporaryFile", counted):
        answer = Client().post("/accounts/login/", {"username": "u", "password": "p",
                                                    "file": upload})
        assert answer.status_code == 200  # the sign-in form again, its fields read
        assert opened == []
    assert list(tmp_path.iterdir()) == []


def test_an_import_without_a_caller_is_refused_before_its_body_is_read(client):
    upload = io.BytesIO(b"{}")
    upload.name = "tokenizer.json"
    api = Client().post("/api/tokenizers/x/import", {"files": upload},
                        HTTP_AUTHORIZATION="Bearer trk_garbage")
    assert api.status_code == 401 and "send an API key" in api.json()["detail"]
    page = Client(HTTP_COOKIE="sessionid=garbage").post("/tokenizers/import/", {})
    assert page.status_code == 302 and "/accounts/login/" in page["Location"]


def _count_staged(tmp_path, settings):
    """Every temporary file Django's upload handler opens while the block runs."""
    import django.core.files.uploadedfile as uploaded

    tmp_path.mkdir(exist_ok=True)
    settings.FILE_UPLOAD_TEMP_DIR = str(tmp_path)
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 10  # any file would go to the temp folder
    opened = []
    real = uploaded.tempfile.NamedTemporaryFile

    def counted(*args, **kwargs):
        opened.append(kwargs.get("dir"))
        return real(*args, **kwargs)

    return opened, mock.patch.object(uploaded.tempfile, "NamedTemporaryFile", counted)


def _tokenizer_file():
    upload = io.BytesIO(b'{"model": {"type": "BPE"}}' + b" " * 100_000)
    upload.name = "tokenizer.json"
    return upload


def test_a_signed_in_import_whose_csrf_token_fails_stages_no_file(registry_data, settings,
                                                                   tmp_path):
    """The import page and the API's session reach their files only once sign-in and CSRF
    passed: a bad token is a 403 with no file read, let alone staged."""
    tmp_path = tmp_path / "staged"
    opened, counting = _count_staged(tmp_path, settings)
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(registry_data["member"])
    browser.get("/tokenizers/import/")  # the CSRF cookie
    with counting:
        page = browser.post("/tokenizers/import/", {"csrfmiddlewaretoken": "x" * 64,
                                                    "tokenizer": "t", "files": _tokenizer_file()})
        api = browser.post("/api/tokenizers/t/import", {"files": _tokenizer_file()},
                           HTTP_X_CSRFTOKEN="x" * 64)
    assert page.status_code == 403 and api.status_code == 403
    assert opened == []
    assert list(tmp_path.iterdir()) == []


def test_an_allowed_import_reads_its_files_behind_the_gate(registry_data, settings, tmp_path):
    """The same form with its token passes the gate and its files reach the view (staged, as
    any Django upload is, only now)."""
    tmp_path = tmp_path / "staged"
    opened, counting = _count_staged(tmp_path, settings)
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(registry_data["member"])
    browser.get("/tokenizers/import/")
    token = browser.cookies["csrftoken"].value
    with counting:
        page = browser.post("/tokenizers/import/", {"csrfmiddlewaretoken": token,
                                                    "tokenizer": "t", "files": _tokenizer_file()})
    assert page.status_code == 400  # the view read the file: not a tokenizer it can import
    assert "tokenizer.json" in page.content.decode()
    assert opened == [str(tmp_path)]
