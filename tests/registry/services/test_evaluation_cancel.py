"""An evaluation's progress (bytes read, parts done, time left) and its cancel
(``services.evaluation_progress``, ``Evaluation.cancel``, ``services.evaluations
.cancel_evaluation``), in one task and in parts, through the services, the page and the API."""

import re
from datetime import timedelta

import pytest
from django.template.defaultfilters import filesizeformat
from django.utils import timezone

from tests.registry.helpers import import_text, media_files, sample_text, train
from tokenizers_app.errors import Forbidden
from tokenizers_app.models import Evaluation
from tokenizers_app.services import evaluation_progress, evaluations
from tokenizers_app.services.evaluation_progress import Stopped, reported
from tokenizers_app.services.evaluations import (
    cancel_evaluation,
    request_evaluation,
    run_evaluation,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def queued(corpus):
    """A queued evaluation of prose-bpe@1 on a 60 KB held-out corpus."""
    version = train(corpus).versions.get()
    held_out = import_text(sample_text(60_000, offset=100_000), "held-out")
    return Evaluation.objects.create(version=version, corpus=held_out)


def cancelled_after(lines: int, evaluation: Evaluation, monkeypatch) -> None:
    """Make the corpus's reader cancel ``evaluation`` after ``lines`` lines, as a user pressing
    Cancel while a worker reads, and report after every block."""
    read_lines = evaluations.read_lines

    def reading(stream, most):
        for number, line in enumerate(read_lines(stream, most)):
            if number == lines:
                Evaluation.objects.get(pk=evaluation.pk).cancel()
            yield line

    monkeypatch.setattr(evaluations, "read_lines", reading)
    monkeypatch.setattr(evaluation_progress, "REPORT_SECONDS", 0)


def test_a_queued_evaluation_cancelled_is_not_computed_and_is_queued_anew_on_request(queued):
    cancelled = cancel_evaluation(evaluation=queued)
    assert (cancelled.status, cancelled.finished_at is not None) == ("cancelled", True)
    run_evaluation(evaluation_id=queued.pk)  # its task, delivered after the cancel
    queued.refresh_from_db()
    assert (queued.status, queued.metrics, queued.attempts) == ("cancelled", {}, 0)
    assert not Evaluation.objects.leaderboard().filter(pk=queued.pk).exists()

    queued.corpus.is_evaluation = True
    queued.corpus.save()
    again = request_evaluation(version=queued.version, corpus=queued.corpus)
    assert (again.pk, again.status) == (queued.pk, "queued")
    run_evaluation(evaluation_id=queued.pk)
    queued.refresh_from_db()
    assert queued.status == "succeeded" and queued.metrics["tokens"] > 0
    assert queued.bytes_done == queued.corpus.size_bytes  # every byte read was reported


def test_cancelling_an_evaluation_that_ended_leaves_it_as_it_is(queued):
    run_evaluation(evaluation_id=queued.pk)
    done = cancel_evaluation(evaluation=Evaluation.objects.get(pk=queued.pk))
    assert done.status == "succeeded" and done.metrics["tokens"] > 0


def test_a_running_evaluation_stops_at_its_next_report_when_cancelled(queued, monkeypatch):
    cancelled_after(200, queued, monkeypatch)
    run_evaluation(evaluation_id=queued.pk)
    queued.refresh_from_db()
    assert (queued.status, queued.metrics, queued.error) == ("cancelled", {}, "")
    assert 0 < queued.bytes_done < queued.corpus.size_bytes  # it had reported what it read


def test_reported_blocks_add_up_to_their_bytes_and_stop_when_the_row_is_gone(queued):
    queued.start_here()
    blocks = ["abc\n", "é€\n", "z"]
    assert list(reported(blocks, queued.owned, every=0)) == blocks
    assert Evaluation.objects.get(pk=queued.pk).bytes_done == len("".join(blocks).encode())
    queued.cancel()
    with pytest.raises(Stopped):
        list(reported(blocks, queued.owned, every=0))


def test_an_evaluation_in_parts_cancelled_stops_its_parts_and_merge(queued, settings):
    from tests.registry.services.test_fanout import evaluate_in_parts
    from tokenizers_app.services.evaluation_fanout import evaluate_corpus_part

    settings.FANOUT_MIN_BYTES, settings.FANOUT_PART_BYTES = 1000, 8000
    evaluation = evaluate_in_parts(queued.pk, skip=1)  # every part but one done
    assert evaluation.status == "running"
    assert evaluation.progress["parts_done"] == evaluation.fanout_parts - 1
    cancel_evaluation(evaluation=evaluation)
    left = evaluation.parts.get(attempt=evaluation.attempts, index=1)
    evaluate_corpus_part(part_id=left.pk, worker="late")  # its task, after the cancel
    evaluation.refresh_from_db()
    left.refresh_from_db()
    assert (evaluation.status, evaluation.metrics, left.done) == ("cancelled", {}, False)
    assert evaluation.progress is None


def test_the_time_left_is_reckoned_from_the_bytes_read_since_the_start(queued):
    assert queued.progress is None  # queued: no progress yet
    queued.start_here()
    half = queued.corpus.size_bytes // 2
    Evaluation.objects.filter(pk=queued.pk).update(
        bytes_done=half, started_at=timezone.now() - timedelta(seconds=30))
    progress = Evaluation.objects.get(pk=queued.pk).progress
    assert progress["bytes_done"] == half and progress["bytes"] == queued.corpus.size_bytes
    assert 28 <= progress["seconds_left"] <= 32
    assert (progress["parts"], progress["parts_done"]) == (0, 0)


def test_only_the_owner_the_uploader_or_staff_may_cancel(queued, member, staff,
                                                         django_user_model):
    owner = django_user_model.objects.create_user("owner")
    uploader = django_user_model.objects.create_user("uploader")
    queued.version.tokenizer.owner = owner
    queued.version.tokenizer.save()
    queued.corpus.uploaded_by = uploader
    queued.corpus.save()
    with pytest.raises(Forbidden, match="only the owner of 'prose-bpe', the uploader of "
                                        "'held-out' or staff can cancel its evaluation"):
        cancel_evaluation(evaluation=queued, user=member)
    assert Evaluation.objects.get(pk=queued.pk).status == "queued"
    for user in (owner, uploader, staff):
        Evaluation.objects.filter(pk=queued.pk).update(status="queued")
        assert cancel_evaluation(evaluation=queued, user=user).status == "cancelled"


def test_the_version_page_shows_progress_and_cancels_for_the_owner(queued, client,
                                                                   django_user_model, member):
    owner = django_user_model.objects.create_user("owner")
    queued.version.tokenizer.owner = owner
    queued.version.tokenizer.save()
    queued.start_here()
    Evaluation.objects.filter(pk=queued.pk).update(
        bytes_done=queued.corpus.size_bytes // 2,
        started_at=timezone.now() - timedelta(seconds=10))
    page = "/tokenizers/prose-bpe/1/"
    client.force_login(member)
    html = client.get(page).content.decode()
    size = queued.corpus.size_bytes
    shown = f"computing… {filesizeformat(size // 2)} of {filesizeformat(size)}, about "
    assert re.search(re.escape(shown) + r"(9|[12]\d)\.0 s left", html), html
    assert "evaluate/cancel" not in html  # not the member's to cancel
    assert client.post(page + "evaluate/cancel", {"corpus": "held-out"}).status_code == 403

    client.force_login(owner)
    assert "evaluate/cancel" in client.get(page).content.decode()
    answer = client.post(page + "evaluate/cancel", {"corpus": "held-out"}, follow=True)
    html = answer.content.decode()
    assert "the evaluation of prose-bpe@1 on held-out is cancelled" in html
    assert "cancelled: evaluate it again below" in html
    assert Evaluation.objects.get(pk=queued.pk).status == "cancelled"


def test_the_api_cancels_and_shows_progress(queued, client, staff):
    from tokenizers_app.models import ApiKey

    _, key = ApiKey.objects.create_key(staff, "ci")
    auth = {"HTTP_AUTHORIZATION": f"Bearer {key}"}
    queued.start_here()
    Evaluation.objects.filter(pk=queued.pk).update(bytes_done=1000)
    type(queued.corpus).objects.filter(pk=queued.corpus.pk).update(is_evaluation=True)
    url = "/api/tokenizers/prose-bpe/versions/1/evaluate"
    answer = client.post(url, {"corpus": "held-out"}, content_type="application/json", **auth)
    assert answer.status_code == 200, answer.content
    assert answer.json()["progress"]["bytes_done"] == 1000
    answer = client.post(url + "/cancel", {"corpus": "held-out"},
                         content_type="application/json", **auth)
    assert answer.status_code == 200, answer.content
    assert (answer.json()["status"], answer.json()["progress"]) == ("cancelled", None)
    missing = client.post(url + "/cancel", {"corpus": "prose"},
                          content_type="application/json", **auth)
    assert missing.status_code == 404
    assert "prose-bpe@1 has no evaluation on 'prose'" in missing.content.decode()
    assert media_files("evaluations") == []


def test_the_version_page_refreshes_its_metrics_while_an_evaluation_is_under_way(queued,
                                                                                 client):
    page = "/tokenizers/prose-bpe/1/"
    html = client.get(page).content.decode()
    assert f'hx-get="{page}?part=metrics" hx-trigger="every 2s"' in html  # queued
    fragment = client.get(page + "?part=metrics", HTTP_HX_REQUEST="true")
    assert fragment.content.decode().lstrip().startswith('<div id="version-metrics"')
    assert "computing… (waiting for a worker)" in fragment.content.decode()
    assert "HX-Refresh" not in fragment

    run_evaluation(evaluation_id=queued.pk)
    fragment = client.get(page + "?part=metrics", HTTP_HX_REQUEST="true")
    assert fragment["HX-Refresh"] == "true"  # done: the whole page once more
    assert "hx-trigger" not in client.get(page).content.decode().split('id="version-metrics"')[1]
