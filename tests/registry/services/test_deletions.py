"""Deleting what nothing depends on (issue 33): a corpus (and its file), a tokenizer, a run; by
its uploader, owner or starter, or staff; from the workflow, the API, a command and the pages.
Anything something depends on is a 409 that says what."""

import io
import json
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from tests.registry.helpers import import_text, train
from tokenizers_app.errors import Conflict, Forbidden
from tokenizers_app.models import ApiKey, Corpus, Tokenizer, TrainingRun
from tokenizers_app.services.deletions import delete_corpus, delete_run, delete_tokenizer
from tokenizers_app.services.runs import cancel_training_run, start_training_run
from tokenizers_app.services.sweep import sweep_leftovers

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(django_user_model):
    return {"uploader": django_user_model.objects.create_user("uploader"),
            "other": django_user_model.objects.create_user("other"),
            "staff": django_user_model.objects.create_user("boss", is_staff=True)}


def stored(corpus) -> Path:
    return Path(settings.MEDIA_ROOT) / corpus.object_name


def test_an_unused_corpus_goes_with_its_file_and_verify_and_the_sweep_stay_clean(
        people, django_capture_on_commit_callbacks):
    corpus = import_text("a mistaken upload\n" * 10, "mistake", uploaded_by=people["uploader"])
    assert stored(corpus).is_file()
    with django_capture_on_commit_callbacks(execute=True):
        delete_corpus(corpus=corpus, user=people["uploader"])
    assert not Corpus.objects.filter(name="mistake").exists()
    assert not stored(corpus).exists()
    out = io.StringIO()
    call_command("verify", stdout=out)
    assert "all as recorded" in out.getvalue()
    assert sweep_leftovers(min_age_seconds=0)["corpus files"] == []


def test_a_used_corpus_is_refused_saying_what_depends_on_it(corpus, people):
    run = train(corpus, "prose-bpe", vocab_size=300)
    with pytest.raises(Conflict) as refused:
        delete_corpus(corpus=corpus)
    assert f"corpus 'prose' cannot be deleted: 1 run trained on it ({run.pk})" in \
        str(refused.value)
    assert "versions are never deleted" in str(refused.value)
    assert Corpus.objects.filter(name="prose").exists() and stored(corpus).is_file()


def test_only_the_uploader_or_staff_delete_a_corpus(people):
    corpus = import_text("text\n", "theirs", uploaded_by=people["uploader"])
    with pytest.raises(Forbidden, match="its uploader is 'uploader', and only its uploader or "
                                        "staff may delete it"):
        delete_corpus(corpus=corpus, user=people["other"])
    delete_corpus(corpus=corpus, user=people["staff"])
    assert not Corpus.objects.exists()


def test_a_cancelled_run_then_its_tokenizer_can_be_deleted(corpus, people):
    run = start_training_run(corpora=[corpus], tokenizer_name="test-bpe", vocab_size=300,
                             created_by=people["uploader"])
    with pytest.raises(Conflict, match="it is queued: cancel it first"):
        delete_run(run=run, user=people["uploader"])
    cancel_training_run(run=run, user=people["uploader"])
    tokenizer = Tokenizer.objects.get(name="test-bpe")
    with pytest.raises(Conflict, match=f"1 run training it \\({run.pk}\\)"):
        delete_tokenizer(tokenizer=tokenizer, user=people["uploader"])
    with pytest.raises(Forbidden):
        delete_run(run=run, user=people["other"])
    delete_run(run=TrainingRun.objects.get(pk=run.pk), user=people["uploader"])
    delete_tokenizer(tokenizer=tokenizer, user=people["uploader"])
    assert not Tokenizer.objects.filter(name="test-bpe").exists()


def test_a_tokenizer_with_versions_and_their_run_are_kept(corpus):
    run = train(corpus, "prose-bpe", vocab_size=300)
    with pytest.raises(Conflict, match="1 version of it \\(prose-bpe@1\\)"):
        delete_tokenizer(tokenizer=run.tokenizer)
    with pytest.raises(Conflict, match="1 version made by it \\(prose-bpe@1\\)"):
        delete_run(run=run)


def bearer(user) -> dict:
    return {"HTTP_AUTHORIZATION": f"Bearer {ApiKey.objects.create_key(user)[1]}"}


def test_the_api_deletes_with_204_and_refuses_with_409_in_words(client, corpus, people):
    train(corpus, "prose-bpe", vocab_size=300)
    spare = import_text("spare text\n", "spare", uploaded_by=people["uploader"])
    assert client.delete("/api/corpora/prose", **bearer(people["uploader"])).status_code == \
        403  # the operator's corpus, not the uploader's
    assert client.delete("/api/corpora/spare", **bearer(people["other"])).status_code == 403
    assert client.delete("/api/corpora/spare", **bearer(people["uploader"])).status_code == 204
    assert not Corpus.objects.filter(pk=spare.pk).exists()
    staff = bearer(people["staff"])
    refused = client.delete("/api/corpora/prose", **staff)
    assert refused.status_code == 409
    assert "1 run trained on it" in json.loads(refused.content)["detail"]
    assert client.delete("/api/tokenizers/prose-bpe", **staff).status_code == 409
    assert client.delete("/api/tokenizers/nothing", **staff).status_code == 404
    run = TrainingRun.objects.get()
    assert client.delete(f"/api/runs/{run.pk}", **staff).status_code == 409


def test_the_command_deletes_and_refuses_in_words(corpus, people):
    out = io.StringIO()
    import_text("spare text\n", "spare", uploaded_by=people["uploader"])
    with pytest.raises(CommandError, match="only its uploader or staff"):
        call_command("delete", "corpus", "spare", "--user", "other", stdout=out)
    call_command("delete", "corpus", "spare", "--user", "uploader", stdout=out)
    assert "corpus spare deleted, and its file" in out.getvalue()
    train(corpus, "prose-bpe", vocab_size=300)
    with pytest.raises(CommandError, match="cannot be deleted: 1 run trained on it"):
        call_command("delete", "corpus", "prose", stdout=out)
    with pytest.raises(CommandError, match="no tokenizer 'nothing'"):
        call_command("delete", "tokenizer", "nothing", stdout=out)


def test_the_pages_delete_and_refuse_with_the_reason_and_a_way_back(client, corpus, people,
                                                                     django_capture_on_commit_callbacks):
    spare = import_text("spare text\n", "spare", uploaded_by=people["uploader"])
    client.force_login(people["uploader"])
    page = client.get("/corpora/spare/").content.decode()
    assert "Delete this corpus…" in page and "It cannot be deleted now" not in page
    unticked = client.post("/corpora/spare/delete")
    assert unticked.status_code == 400 and "tick the box" in unticked.content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        done = client.post("/corpora/spare/delete", {"confirm": "on"}, follow=True)
    assert "corpus spare is deleted, and its file" in done.content.decode()
    assert not stored(spare).exists()
    train(corpus, "prose-bpe", vocab_size=300)
    client.force_login(people["staff"])
    page = client.get("/corpora/prose/").content.decode()
    assert "It cannot be deleted now:</strong> 1 run trained on it" in page
    refused = client.post("/corpora/prose/delete", {"confirm": "on"})
    html = refused.content.decode()
    assert refused.status_code == 409 and '<header class="top">' in html
    assert "1 run trained on it" in html and 'href="/corpora/prose/"' in html
    client.force_login(people["other"])
    assert "Delete this corpus" not in client.get("/corpora/prose/").content.decode()


def test_a_tokenizer_whose_only_run_was_cancelled_links_the_run_and_says_why(client, corpus,
                                                                            people):
    """Its page said "No ready version yet.", with no link to the run or to why."""
    run = start_training_run(corpora=[corpus], tokenizer_name="test-bpe", vocab_size=300,
                             created_by=people["uploader"])
    cancel_training_run(run=run, user=people["uploader"])
    html = client.get("/tokenizers/test-bpe/").content.decode()
    assert f'No ready version yet: its latest run, <a href="/runs/{run.pk}/">run {run.pk}</a>, ' \
           f'was cancelled' in html
    assert "cancelled by its starter (uploader) or staff before it saved a version" in html
    client.force_login(people["uploader"])
    html = client.get("/tokenizers/test-bpe/").content.decode()
    assert "Delete this tokenizer…" in html and f"1 run training it ({run.pk})" in html
    assert "Delete this run…" in client.get(f"/runs/{run.pk}/").content.decode()


def test_a_cancelled_run_and_then_its_tokenizer_are_deleted_from_their_pages(client, corpus,
                                                                             people):
    run = start_training_run(corpora=[corpus], tokenizer_name="test-bpe", vocab_size=300,
                             created_by=people["uploader"])
    cancel_training_run(run=run, user=people["uploader"])
    client.force_login(people["uploader"])
    refused = client.post("/tokenizers/test-bpe/delete", {"confirm": "on"})
    assert refused.status_code == 409 and f"1 run training it ({run.pk})" in \
        refused.content.decode()
    gone = client.post(f"/runs/{run.pk}/delete", {"confirm": "on"}, follow=True)
    assert f"run {run.pk} is deleted" in gone.content.decode()
    assert gone.redirect_chain[-1][0] == "/tokenizers/test-bpe/"
    done = client.post("/tokenizers/test-bpe/delete", {"confirm": "on"}, follow=True)
    assert "tokenizer test-bpe is deleted" in done.content.decode()
    assert not Tokenizer.objects.filter(name="test-bpe").exists()
    assert not TrainingRun.objects.exists()


def test_a_run_started_on_a_corpus_deleted_meanwhile_is_refused_in_words(corpus,
                                                                        monkeypatch):
    """The corpora are resolved before the run's transaction; one deleted in between is said,
    not an integrity error."""
    from tokenizers_app.services import runs

    resolved = runs.resolve_corpora

    def then_deleted(corpora):
        found = resolved(corpora)
        delete_corpus(corpus=found[0])
        return found

    monkeypatch.setattr(runs, "resolve_corpora", then_deleted)
    with pytest.raises(runs.NotFound, match="deleted meanwhile"):
        start_training_run(corpora=["prose"], tokenizer_name="late-bpe", vocab_size=300)
    assert not TrainingRun.objects.exists()
