"""Writing through the pages: signing in, uploading a corpus, starting and cancelling a run.
Errors show beside their field, and bad input leaves no row."""

import io
from pathlib import Path

import pytest

from tokenizers_app.models import Corpus, TrainingRun

pytestmark = pytest.mark.django_db


def upload(client, data: bytes, name: str, **extra):
    stream = io.BytesIO(data)
    stream.name = "web.txt"
    fields = {"name": name, **{k: v for k, v in extra.items() if not k.startswith("HTTP_")}}
    return client.post("/corpora/upload/", {**fields, "file": stream}, **{
        k: v for k, v in extra.items() if k.startswith("HTTP_")})


def test_anonymous_visitors_are_sent_to_sign_in_for_writes(client, registry_data):
    for url in ["/corpora/upload/", "/runs/new/"]:
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert client.post("/corpora/upload/").status_code == 302
    assert client.post(f"/runs/{registry_data['runs'][0].pk}/cancel").status_code == 302


def test_signing_in_with_the_login_page(client, registry_data):
    response = client.post("/accounts/login/", {"username": "member", "password": "pw-member-1"})
    assert response.status_code == 302 and response["Location"] == "/"
    assert "member" in client.get("/").content.decode()


def test_reads_can_require_sign_in(client, registry_data, settings):
    settings.DASHBOARD_ANONYMOUS_READS = False
    assert client.get("/compare/").status_code == 302
    client.force_login(registry_data["member"])
    assert client.get("/compare/").status_code == 200


def test_an_upload_is_stored_hashed_and_counted(client, registry_data):
    client.force_login(registry_data["member"])
    response = upload(client, "héllo wörld\nsecond line\n".encode() * 100, "web", evaluation="on")
    corpus = Corpus.objects.get(name="web")
    assert response.status_code == 302 and response["Location"] == "/corpora/web/"
    assert corpus.line_count == 200 and corpus.is_evaluation
    assert corpus.uploaded_by == registry_data["member"] and corpus.original_filename == "web.txt"


def test_the_same_bytes_twice_give_the_existing_corpus(client, registry_data):
    client.force_login(registry_data["member"])
    data = registry_data["corpus"].path.read_bytes()
    response = upload(client, data, "again")
    assert response["Location"] == "/corpora/prose/"
    assert not Corpus.objects.filter(name="again").exists()


def test_an_upload_that_is_not_utf8_is_refused_beside_the_form_and_leaves_nothing(
        client, registry_data, settings):
    client.force_login(registry_data["member"])
    response = upload(client, b"fine text " * 1000 + b"\xff\xfe bad", "bad")
    html = response.content.decode()
    assert response.status_code == 400
    assert "not valid UTF-8: byte 0xff at byte offset 10000" in html
    assert not Corpus.objects.filter(name="bad").exists()
    incoming = Path(settings.MEDIA_ROOT) / "corpora" / "incoming"
    assert not incoming.exists() or list(incoming.iterdir()) == []


def test_an_upload_over_the_size_cap_is_refused_before_the_body_is_read(client, registry_data,
                                                                       settings):
    client.force_login(registry_data["member"])
    settings.CORPUS_MAX_BYTES = 1000
    response = upload(client, b"x" * 3_000_000, "huge")
    assert response.status_code == 413 and "CORPUS_MAX_BYTES" in response.content.decode()
    assert not Corpus.objects.filter(name="huge").exists()


@pytest.mark.parametrize("over", [1, 10 << 20], ids=["1 byte over", "10 MB over"])
def test_a_corpus_over_the_limit_is_413_with_the_reason_on_the_form(client, registry_data,
                                                                   settings, over):
    """Seen from Content-Length (10 MB over: the file's bytes are not read) or while the bytes
    arrive (1 byte over): the form comes back with the reason and the name typed, as 413."""
    client.force_login(registry_data["member"])
    settings.CORPUS_MAX_BYTES = 1000
    response = upload(client, b"x" * (1000 + over), "big")
    assert response.status_code == 413
    form = response.context["form"]
    assert any("CORPUS_MAX_BYTES" in error for error in form.non_field_errors())
    assert form["name"].value() == "big" and "CORPUS_MAX_BYTES" in response.content.decode()
    assert not Corpus.objects.filter(name="big").exists()
    incoming = Path(settings.MEDIA_ROOT) / "corpora" / "incoming"
    assert not incoming.exists() or list(incoming.iterdir()) == []


def test_an_htmx_upload_is_answered_with_a_redirect_htmx_follows(client, registry_data):
    client.force_login(registry_data["member"])
    response = upload(client, b"some text for htmx\n" * 50, "via-htmx", HTTP_HX_REQUEST="true")
    assert response.status_code == 200 and response["HX-Redirect"] == "/corpora/via-htmx/"


def test_starting_a_run_queues_it_and_shows_its_page(client, registry_data):
    client.force_login(registry_data["member"])
    response = client.post("/runs/new/", {
        "tokenizer": "web-bpe", "corpus": "prose", "pattern": "gpt4", "vocab_size": 400,
        "special_tokens": "<|endoftext|>\n<|pad|>", "min_frequency": 2, "sweep": "300, 350"})
    run = TrainingRun.objects.get(tokenizer__name="web-bpe")
    assert response.status_code == 302 and response["Location"] == f"/runs/{run.pk}/"
    assert (run.pattern, run.special_tokens, run.min_frequency, run.sweep) == (
        "gpt4", ["<|endoftext|>", "<|pad|>"], 2, [300, 350])
    assert run.created_by == registry_data["member"]


@pytest.mark.parametrize("changes, field, message", [
    ({"vocab_size": 100}, "vocab_size", "vocab size 100 is out of bounds"),
    ({"sweep": "200"}, "sweep", "sweep vocab size 200"),
    ({"sweep": "a, b"}, "sweep", "whole numbers"),
    ({"pattern": "custom", "custom_pattern": "(unclosed"}, "pattern", "(unclosed"),
    ({"tokenizer": "bad name"}, "tokenizer", "tokenizer name 'bad name' is not valid"),
    ({"special_tokens": "<s>\n<s>"}, "special_tokens", "<s>"),
    # the core's bounds, as the API's: once a 500 (the row could not hold it)
    ({"min_frequency": 2**31}, "min_frequency", "at most 2147483647"),
    ({"min_frequency": 0}, "min_frequency", "min frequency must be an integer >= 1, got 0"),
    ({"sweep": "²"}, "sweep", "whole numbers"),
    ({"sweep": ", ".join(map(str, range(257, 1256)))}, "sweep",
     "the sweep lists 999 vocab sizes; a run takes at most 32 (MAX_SWEEP_SIZES)"),
])
def test_bad_run_parameters_are_shown_beside_their_field_and_queue_nothing(
        client, registry_data, changes, field, message):
    client.force_login(registry_data["member"])
    data = {"tokenizer": "web-bpe", "corpus": "prose", "pattern": "gpt2", "vocab_size": 400,
            "special_tokens": "", "min_frequency": 1, "sweep": "", **changes}
    response = client.post("/runs/new/", data)
    assert response.status_code == 400
    errors = response.context["form"].errors
    assert any(message in error for error in errors.get(field, []) + errors.get("__all__", [])), errors
    assert not TrainingRun.objects.filter(tokenizer__name="web-bpe").exists()


def test_cancelling_a_queued_run_from_its_page(client, registry_data):
    client.force_login(registry_data["member"])
    client.post("/runs/new/", {"tokenizer": "web-bpe", "corpus": "prose", "pattern": "gpt2",
                               "vocab_size": 400, "min_frequency": 1})
    run = TrainingRun.objects.get(tokenizer__name="web-bpe")
    response = client.post(f"/runs/{run.pk}/cancel")
    run.refresh_from_db()
    assert response.status_code == 302 and run.status == TrainingRun.Status.CANCELLED


def test_marking_an_evaluation_corpus_needs_a_signed_in_user(client, registry_data):
    """Its uploader, here (other members and staff: tests/web/test_access.py)."""
    Corpus.objects.filter(name="prose").update(uploaded_by=registry_data["member"])
    assert client.post("/corpora/prose/evaluation", {"evaluation": "on"}).status_code == 302
    assert not Corpus.objects.get(name="prose").is_evaluation
    client.force_login(registry_data["member"])
    client.post("/corpora/prose/evaluation", {"evaluation": "on"})
    assert Corpus.objects.get(name="prose").is_evaluation


def test_a_corpus_file_is_served_only_to_signed_in_users(client, registry_data):
    assert client.get("/corpora/prose/file").status_code == 302
    client.force_login(registry_data["member"])
    response = client.get("/corpora/prose/file")
    assert b"".join(response.streaming_content) == registry_data["corpus"].path.read_bytes()


def test_the_run_form_shows_every_error_at_once(client, registry_data):
    """A name error once hid the ``<unk>`` error until the next submit."""
    client.force_login(registry_data["member"])
    response = client.post("/runs/new/", {
        "tokenizer": "bad name", "corpus": "prose", "algorithm": "char_bpe", "vocab_size": 400,
        "special_tokens": "<s>", "min_frequency": 0, "sweep": "5000"})
    assert response.status_code == 400
    errors = response.context["form"].errors
    assert "tokenizer name 'bad name' is not valid" in errors["tokenizer"][0]
    assert "needs the unknown token '<unk>'" in errors["special_tokens"][0]
    assert "min frequency must be an integer >= 1" in errors["min_frequency"][0]
    assert "sweep vocab size 5000" in errors["sweep"][0]
    html = response.content.decode()
    assert "not valid" in html and "unknown token" in html  # both on the page
    assert not TrainingRun.objects.filter(tokenizer__name="bad name").exists()


def test_a_field_the_form_refuses_does_not_hide_the_workflows_errors(client, registry_data):
    client.force_login(registry_data["member"])
    response = client.post("/runs/new/", {
        "tokenizer": "prose-bpe", "corpus": "prose", "vocab_size": "",
        "special_tokens": "<s>\n<s>", "min_frequency": 1})
    errors = response.context["form"].errors
    assert response.status_code == 403  # prose-bpe is not the member's: said first
    assert "only its owner or staff" in errors["tokenizer"][0]
    assert errors["vocab_size"] == ["This field is required."]
    assert "<s>" in errors["special_tokens"][0]


def test_the_upload_and_import_forms_show_the_names_error_beside_the_missing_files(
        client, registry_data):
    client.force_login(registry_data["member"])
    upload_form = client.post("/corpora/upload/", {"name": "bad name"})
    errors = upload_form.context["form"].errors
    assert "choose a UTF-8 text file" in errors["__all__"][0]
    assert "corpus name 'bad name' is not valid" in errors["name"][0]
    import_form = client.post("/tokenizers/import/", {"tokenizer": "prose-bpe"})
    errors = import_form.context["form"].errors
    assert import_form.status_code == 403
    assert "choose the tokenizer's files" in errors["__all__"][0]
    assert "only its owner or staff" in errors["tokenizer"][0]
