"""With the broker down, work is kept, not lost, and the user is told in one line: a run is saved
and waits for the queue (a warning from the command, 503 from the API, a banner on the page), an
imported version's evaluation stays queued; the reaper sends both again later. No traceback.

These tests commit (``transaction=True``) so that tasks are sent the way they are in use; the
broker is made to refuse every message."""

import io
import json

import pytest
from django.core.management import call_command
from kombu.exceptions import OperationalError

from tokenizers_app.models import Evaluation, TrainingRun

from .helpers import import_text, sample_text

pytestmark = pytest.mark.django_db(transaction=True)
# as redis-py words it: the broker's host is in it, for the log only, never for the user
BROKER_REASON = "Error 111 connecting to broker.internal:6379. Connection refused."


@pytest.fixture
def broker_down(monkeypatch, settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    sent = []

    def refuse(task, args=None, kwargs=None, **options):
        sent.append((task.name, args))
        raise OperationalError(BROKER_REASON)

    monkeypatch.setattr("celery.app.task.Task.apply_async", refuse)
    return sent


def test_train_keeps_the_run_and_says_so_in_one_line(broker_down, caplog):
    import_text(sample_text(5_000), "prose")
    out, err = io.StringIO(), io.StringIO()
    call_command("train", "--corpus", "prose", "--tokenizer", "t", "--vocab-size", "300",
                 stdout=out, stderr=err)
    [run] = TrainingRun.objects.all()
    assert run.status == "queued"
    assert err.getvalue() == (f"warning: run {run.pk} is saved, but the task queue does not "
                              f"answer (the reason is in the server's log): the run waits for "
                              f"the queue and is sent when it is back\n")
    assert "Traceback" not in caplog.text and all(r.exc_info is None for r in caplog.records)
    assert f"the task queue does not answer ({BROKER_REASON})" in caplog.text
    assert broker_down == [("tokenizers_app.tasks.execute_training_run", (run.pk,))]


def test_the_api_answers_503_with_the_saved_run(broker_down, client, django_user_model):
    from tokenizers_app.models import ApiKey

    import_text(sample_text(5_000), "prose")
    _, key = ApiKey.objects.create_key(django_user_model.objects.create_user("ci"))
    response = client.post("/api/runs", json.dumps({"tokenizer": "t", "corpora": ["prose"],
                                                    "vocab_size": 300}),
                           content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {key}")
    assert response.status_code == 503
    body = response.json()
    assert "the task queue does not answer" in body["detail"]
    assert "broker.internal" not in response.content.decode()  # the host is the log's alone
    assert body["run"]["status"] == "queued" and TrainingRun.objects.filter(pk=body["run"]["id"])


def test_the_page_shows_a_banner_on_the_saved_run(broker_down, client, django_user_model):
    corpus = import_text(sample_text(5_000), "prose")
    client.force_login(django_user_model.objects.create_user("member"))
    response = client.post("/runs/new/", {"corpus": corpus.name, "tokenizer": "t",
                                          "vocab_size": 300, "pattern": "gpt2",
                                          "min_frequency": 1}, follow=True)
    [run] = TrainingRun.objects.all()
    assert response.redirect_chain[-1][0] == f"/runs/{run.pk}/"
    page = response.content.decode()
    assert "the task queue does not answer" in page  # the banner
    assert "broker.internal" not in page
    assert "waiting for a worker" in page and "Its task could not be sent" in page
    assert TrainingRun.objects.get().queue_was_down  # recorded, so the page says so later too


def test_an_import_keeps_its_evaluation_queued_for_the_reaper(broker_down, tmp_path, settings):
    from tests.bpe.format_samples import trained
    from tokenizers_app.bpe import save_tokenizer
    from tokenizers_app.services.evaluations import reap_evaluations

    import_text(sample_text(5_000), "held-out", is_evaluation=True)
    save_tokenizer(trained("gpt2", False), tmp_path / "tok.json", "hf")
    call_command("import_tokenizer", str(tmp_path / "tok.json"), "--tokenizer", "imported",
                 stdout=io.StringIO())
    [evaluation] = Evaluation.objects.all()
    assert evaluation.status == "queued" and len(broker_down) == 1
    settings.EVALUATION_RESEND_SECONDS = 0
    assert reap_evaluations() == [evaluation.pk]  # sent again (and refused again: still queued)
    assert len(broker_down) == 2 and Evaluation.objects.get().status == "queued"
