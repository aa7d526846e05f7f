"""The poison case: an evaluation whose worker dies each time it tries (a tokenizer that aborts
its process) is started at most ``EVALUATION_MAX_ATTEMPTS`` times, then fails in words; and a
library that aborts while evaluating dies in its own child, so the evaluation fails in words at
once and the worker lives."""

from datetime import timedelta
from unittest import mock

import pytest
from django.db import transaction
from django.utils import timezone

from tests.hostile_files import multiplying_replace
from tests.registry.helpers import import_text, sample_text, train
from tokenizers_app.models import Evaluation, Tokenizer, TokenizerVersion
from tokenizers_app.services.evaluations import reap_evaluations, run_evaluation


def planted(name: str, files: dict[str, bytes]) -> TokenizerVersion:
    """A version written without the import's checks (as one imported before they existed)."""
    from tokenizers_app.engines.hf import HFEngine
    from tokenizers_app.services.versions import add_version

    with mock.patch("celery.app.task.Task.apply_async"), transaction.atomic():
        return add_version(tokenizer=Tokenizer.objects.create(name=name),
                           core=HFEngine(files["tokenizer.json"]),
                           source=TokenizerVersion.Source.IMPORT)


@pytest.mark.django_db
def test_an_evaluation_whose_worker_dies_every_time_fails_in_words_after_its_attempts(
        corpus, settings, django_capture_on_commit_callbacks):
    settings.EVALUATION_MAX_ATTEMPTS = 3
    import_text(sample_text(5_000, offset=100_000), "held-out", is_evaluation=True)
    train(corpus)
    evaluation = Evaluation.objects.get()
    for attempt in range(1, 4):
        assert Evaluation.objects.claim(evaluation.pk) is not None  # a worker starts it ...
        assert Evaluation.objects.get(pk=evaluation.pk).attempts == attempt
        long_ago = timezone.now() - timedelta(hours=2)  # ... and dies with it
        Evaluation.objects.filter(pk=evaluation.pk).update(started_at=long_ago,
                                                           heartbeat_at=long_ago)
        with django_capture_on_commit_callbacks():
            sent = reap_evaluations(stale_seconds=3600)
        assert sent == ([evaluation.pk] if attempt < 3 else [])
    failed = Evaluation.objects.get(pk=evaluation.pk)
    assert failed.status == "failed"
    assert failed.error.startswith("the worker evaluating it died in each of its 3 attempts")
    assert "EVALUATION_MAX_ATTEMPTS 3" in failed.error
    with django_capture_on_commit_callbacks():
        assert reap_evaluations(stale_seconds=3600) == []  # never again by itself
    assert failed.retry() and Evaluation.objects.get(pk=evaluation.pk).attempts == 0  # asked


@pytest.mark.django_db
def test_a_library_that_aborts_while_evaluating_fails_it_in_words_and_this_process_lives(
        settings):
    settings.ENGINE_WORKER_MEMORY_BYTES = 512 * 1024**2
    with mock.patch("celery.app.task.Task.apply_async"):
        import_text("a banana and a llama\n" * 200, "aaa", is_evaluation=True)
        planted("grows", multiplying_replace())
    evaluation = Evaluation.objects.get()
    run_evaluation(evaluation_id=evaluation.pk)
    evaluation.refresh_from_db()
    assert evaluation.status == "failed" and evaluation.attempts == 1
    assert "needed more than the 512 MB of memory it may use" in evaluation.error
    assert "Traceback" not in evaluation.error
