"""The admin's evaluation actions (issue 19): a corpus made an evaluation corpus there, by its
flag or by the action, evaluates every ready version; versions are evaluated on request on every
evaluation corpus, once per (version, corpus)."""

import pytest

from tokenizers_app.models import Evaluation

from .helpers import import_text, sample_text
from .test_admin import staff_client, versions  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db


def test_the_corpus_action_evaluates_every_ready_version_once(staff_client, versions):
    held_out = import_text(sample_text(4_000, offset=50_000), "held-out")
    for _ in range(2):  # a second time changes nothing
        response = staff_client.post("/admin/tokenizers_app/corpus/", {
            "action": "evaluate_everything", "_selected_action": [held_out.pk]}, follow=True)
        assert "every ready version is queued for evaluation" in response.content.decode().lower()
    held_out.refresh_from_db()
    assert held_out.is_evaluation
    assert sorted(Evaluation.objects.filter(corpus=held_out).values_list("version", flat=True)) \
        == sorted(v.pk for v in versions)


def test_ticking_the_flag_in_the_admin_evaluates_what_exists(staff_client, versions):
    held_out = import_text(sample_text(4_000, offset=50_000), "held-out")
    response = staff_client.post(f"/admin/tokenizers_app/corpus/{held_out.pk}/change/",
                                 {"is_evaluation": "on"})
    assert response.status_code == 302, response.content.decode()[:3000]
    assert Evaluation.objects.filter(corpus=held_out).count() == len(versions)


def test_the_version_action_evaluates_on_every_evaluation_corpus(staff_client, versions):
    first = import_text(sample_text(4_000, offset=50_000), "first")
    second = import_text(sample_text(4_000, offset=60_000), "second")
    Evaluation.objects.all().delete()
    for corpus in (first, second):
        corpus.mark_evaluation()  # the flag alone: nothing queued yet
    assert not Evaluation.objects.exists()
    response = staff_client.post("/admin/tokenizers_app/tokenizerversion/", {
        "action": "evaluate", "_selected_action": [versions[0].pk]}, follow=True)
    assert "queued the evaluations not yet done" in response.content.decode().lower()
    assert sorted(Evaluation.objects.values_list("version", "corpus")) == [
        (versions[0].pk, first.pk), (versions[0].pk, second.pk)]
