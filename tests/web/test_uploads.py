"""Corpus uploads write nothing before the request is allowed (sign-in and CSRF on the page, the
key or the session on the API), and every refusal, at any point, leaves no file under MEDIA_ROOT
at once: no ``.part`` waiting for the sweep."""

import hashlib
import io
import uuid
from pathlib import Path

import pytest
from django.db import OperationalError
from django.test import Client

from tests.registry.helpers import import_text
from tokenizers_app import uploads
from tokenizers_app.models import ApiKey, Corpus
from tokenizers_app.services.corpora import CorpusStager

pytestmark = pytest.mark.django_db

TEXT = "héllo wörld, a line of text\n".encode() * 12_000  # about 350 KB: several blocks
PAGE, API = "/corpora/upload/", "/api/corpora"


@pytest.fixture
def people(db, settings, tmp_path, django_user_model):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    settings.CORPUS_MAX_BYTES = 400_000
    import_text("the corpus that is already here\n", "prose")
    member = django_user_model.objects.create_user("member", password="pw-member-1")
    return {"member": member, "key": ApiKey.objects.create_key(member, "ci")[1]}


@pytest.fixture
def stagers(monkeypatch) -> list:
    """Every ``CorpusStager`` made while the test runs: one is made when an upload is staged."""
    made = []

    class Counted(CorpusStager):
        def __init__(self):
            super().__init__()
            self.blocks = []
            made.append(self)

        def write(self, data: bytes) -> None:
            self.blocks.append(len(data))
            super().write(data)

    monkeypatch.setattr(uploads, "CorpusStager", Counted)
    return made


def media_files(settings) -> set:
    root = Path(settings.MEDIA_ROOT)
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def corpus_file(data: bytes = TEXT, name: str = "web.txt"):
    stream = io.BytesIO(data)
    stream.name = name
    return stream


def browser(people=None) -> Client:
    """A client held to CSRF checks as a browser is, with the CSRF cookie the upload page sets
    (signed in as ``people``'s member if given); ``.token`` is its CSRF token."""
    client = Client(enforce_csrf_checks=True)
    if people is not None:
        client.force_login(people["member"])
    client.get(PAGE if people is not None else "/accounts/login/")
    client.token = client.cookies["csrftoken"].value
    return client


def key(people) -> dict:
    return {"HTTP_AUTHORIZATION": f"Bearer {people['key']}"}


def page_form(client, **fields):
    return {"csrfmiddlewaretoken": client.token, "name": "web", "file": corpus_file(), **fields}


def gone(*args, **kwargs):
    raise OperationalError("server closed the connection unexpectedly")


# Refused before the request is allowed: nothing may be staged at all.
BEFORE_THE_CHECK = {
    "page, anonymous (with a CSRF token)": (
        lambda p: (lambda c: c.post(PAGE, page_form(c)))(browser()), 302),
    "page, anonymous without a CSRF cookie": (
        lambda p: Client(enforce_csrf_checks=True).post(PAGE, {
            "name": "web", "file": corpus_file()}), 403),
    "page, a wrong CSRF token": (
        lambda p: (lambda c: c.post(PAGE, page_form(c, csrfmiddlewaretoken="x" * 64)))(
            browser(p)), 403),
    "api, no key": (lambda p: Client().post(API, {"name": "web", "file": corpus_file()}), 401),
    "api, a bad key": (lambda p: Client().post(API, {"name": "web", "file": corpus_file()},
                                               HTTP_AUTHORIZATION="Bearer trk_nothing"), 401),
    "api, a session with a wrong CSRF token": (
        lambda p: browser(p).post(API, {"name": "web", "file": corpus_file()},
                                  HTTP_X_CSRFTOKEN="x" * 64), 403),
    "page, too large by its Content-Length": (
        lambda p: (lambda c: c.post(PAGE, page_form(c, file=corpus_file(b"x" * 1_500_000))))(
            browser(p)), 413),
    "api, too large by its Content-Length": (
        lambda p: Client().post(API, {"name": "web", "file": corpus_file(b"x" * 1_500_000)},
                                **key(p)), 413),
}


@pytest.mark.parametrize("ask, status", list(BEFORE_THE_CHECK.values()),
                         ids=list(BEFORE_THE_CHECK))
def test_a_request_refused_by_its_check_stages_nothing(people, settings, stagers, ask, status):
    before = media_files(settings)
    answer = ask(people)
    assert answer.status_code == status, answer.content
    assert stagers == []  # not one byte of the file was written, not even for a moment
    assert media_files(settings) == before
    assert not Corpus.objects.filter(name="web").exists()


def test_the_database_gone_at_the_check_stages_nothing(people, settings, stagers, monkeypatch):
    signed_in = browser(people)
    monkeypatch.setattr(ApiKey.objects, "authenticate", gone)
    monkeypatch.setattr("django.contrib.sessions.backends.db.SessionStore.load", gone)
    before = media_files(settings)
    api_answer = Client().post(API, {"name": "web", "file": corpus_file()}, **key(people))
    page_answer = signed_in.post(PAGE, page_form(signed_in))
    assert (api_answer.status_code, page_answer.status_code) == (503, 503)
    assert "database does not answer" in api_answer.json()["detail"]
    assert stagers == [] and media_files(settings) == before


# Refused after the check passed: the file was staged, and is gone before the answer leaves.
def page(**fields):
    return lambda p, **extra: (lambda c: c.post(PAGE, page_form(c, **fields), **extra))(
        browser(p))


def api(fields: dict):
    return lambda p, **extra: Client().post(API, fields, **key(p), **extra)


AFTER_THE_CHECK = {
    "page, no name": (page(name=""), 400),
    "page, a bad name": (page(name="a b"), 400),
    "page, a name taken by other bytes": (page(name="prose"), 409),
    "page, two file fields": (page(file=[corpus_file(), corpus_file(b"other\n")]), 400),
    "page, not UTF-8": (page(file=corpus_file(TEXT + b"\xff")), 400),
    "page, an empty file": (page(file=corpus_file(b"")), 400),
    "page, 1 byte over the limit": (page(file=corpus_file(b"x" * 400_001)), 413),
    "api, no name": (api({"file": corpus_file()}), 422),
    "api, evaluation=maybe": (api({"name": "web", "evaluation": "maybe",
                                   "file": corpus_file()}), 422),
    "api, a bad name": (api({"name": "a b", "file": corpus_file()}), 400),
    "api, a name taken by other bytes": (api({"name": "prose", "file": corpus_file()}), 409),
    "api, two file fields": (api({"name": "web", "file": [corpus_file(),
                                                          corpus_file(b"other\n")]}), 400),
    "api, not UTF-8": (api({"name": "web", "file": corpus_file(TEXT + b"\xff")}), 400),
    "api, an empty file": (api({"name": "web", "file": corpus_file(b"")}), 400),
    "api, 1 byte over the limit": (api({"name": "web", "file": corpus_file(b"x" * 400_001)}),
                                   413),
}


@pytest.mark.parametrize("ask, status", list(AFTER_THE_CHECK.values()),
                         ids=list(AFTER_THE_CHECK))
def test_every_refusal_after_the_check_removes_what_it_staged_at_once(people, settings, stagers,
                                                                      ask, status):
    before = media_files(settings)
    answer = ask(people)
    assert answer.status_code == status, answer.content
    assert stagers, "the check passed: the file was staged"
    assert media_files(settings) == before
    assert not Corpus.objects.filter(name="web").exists()


@pytest.mark.parametrize("ask", [page(), api({"name": "web", "file": corpus_file()})],
                         ids=["page", "api"])
def test_the_database_gone_while_storing_leaves_no_file(people, settings, stagers, monkeypatch,
                                                        ask):
    monkeypatch.setattr(Corpus.objects, "filter", gone)
    before = media_files(settings)
    answer = ask(people)
    assert answer.status_code == 503, answer.content
    assert stagers and media_files(settings) == before


def test_a_throttled_upload_is_refused_and_writes_nothing(people, settings, stagers):
    settings.THROTTLE_UPLOADS = "1/hour"
    address = f"10.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}"
    first = Client().post(API, {"name": "web", "file": corpus_file()}, **key(people),
                          REMOTE_ADDR=address)
    assert first.status_code == 201 and len(stagers) == 1
    before = media_files(settings)
    for ask in (page(name="again"), api({"name": "again", "file": corpus_file(b"other\n")})):
        throttled = ask(people, REMOTE_ADDR=address)
        assert throttled.status_code == 429 and "Retry-After" in throttled
    assert len(stagers) == 1 and media_files(settings) == before


@pytest.mark.parametrize("where", ["page", "api"])
def test_a_session_upload_read_up_to_the_file_by_the_csrf_check_is_read_again_whole(
        people, settings, stagers, where):
    """The CSRF check reads the body up to the file; once it passed, the body is read again
    from its start: the fields after the file count, and the corpus is the bytes sent, streamed
    to disk in blocks (never held whole)."""
    client = browser(people)
    form = {"csrfmiddlewaretoken": client.token, "file": corpus_file(), "name": "late-name"}
    answer = client.post(PAGE if where == "page" else API, form)
    assert answer.status_code == (302 if where == "page" else 201), answer.content
    corpus = Corpus.objects.get(name="late-name")
    assert corpus.sha256 == hashlib.sha256(TEXT).hexdigest()
    assert corpus.path.read_bytes() == TEXT
    [stager] = stagers
    assert len(stager.blocks) > 4 and max(stager.blocks) <= 64 * 1024
    assert list((Path(settings.MEDIA_ROOT) / "corpora" / "incoming").iterdir()) == []


def test_what_comes_before_the_file_is_bounded_while_the_check_has_not_passed(
        people, settings, stagers, monkeypatch):
    """Until the check passes, what is read is kept (to be read again): part headers (up to
    1 KB each, for up to 1,000 fields) do not count against Django's DATA_UPLOAD_MAX_MEMORY_SIZE,
    so the kept bytes have a bound of their own, and a form over it is refused, not held."""
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    monkeypatch.setattr(uploads, "FORM_SLACK", 100_000)
    client = browser()

    def form(fields: int) -> bytes:
        parts = [f'Content-Disposition: form-data; name="csrfmiddlewaretoken"\r\n\r\n'
                 f'{client.token}']
        parts += [f'Content-Disposition: form-data; name="f{i}"\r\nX-Pad: {"p" * 900}'
                  f'\r\n\r\nx' for i in range(fields)]
        return "".join(f"--b0undary\r\n{part}\r\n" for part in parts).encode() + \
            b"--b0undary--\r\n"

    kind = "multipart/form-data; boundary=b0undary"
    assert client.post(PAGE, form(200), content_type=kind).status_code == 400  # 190 KB kept
    assert client.post(PAGE, form(5), content_type=kind).status_code == 302  # to sign in
    assert stagers == []
