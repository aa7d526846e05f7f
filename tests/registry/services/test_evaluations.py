"""Queuing, computing and reaping evaluations (``services.evaluations``)."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from tests.registry.helpers import import_text, media_files, sample_text, train
from tokenizers_app.bpe.formats import dumps_tokenizer
from tokenizers_app.models import (
    Evaluation,
    TrainingRun,
)
from tokenizers_app.errors import Invalid
from tokenizers_app.services.corpora import set_evaluation
from tokenizers_app.services.evaluations import (
    evaluate_everything_on,
    evaluate_version,
    request_evaluation,
    reap_evaluations,
    run_evaluation,
)
from tokenizers_app.services.downloads import (
    render_tokenizer_files,
)

pytestmark = pytest.mark.django_db

Status = TrainingRun.Status


# -- evaluations ----------------------------------------------------------------------------------

def test_a_new_version_queues_an_evaluation_per_evaluation_corpus(
        corpus, django_capture_on_commit_callbacks):
    held_out = import_text(sample_text(5_000, offset=100_000), "held-out", is_evaluation=True)

    with django_capture_on_commit_callbacks() as callbacks:
        version = train(corpus).versions.get()

    evaluation = Evaluation.objects.get()
    assert (evaluation.version, evaluation.corpus, evaluation.status) == (
        version, held_out, "queued")
    assert len(callbacks) == 2  # the run, then the evaluation
    run_evaluation(evaluation_id=evaluation.pk)
    evaluation.refresh_from_db()
    assert evaluation.status == "succeeded", evaluation.error
    assert evaluation.metrics["compression_ratio"] > 1


def test_marking_an_evaluation_corpus_queues_every_ready_version_once(
        corpus, django_capture_on_commit_callbacks):
    first = train(corpus).versions.get()
    second = train(corpus, vocab_size=450).versions.get()
    held_out = import_text(sample_text(5_000, offset=100_000), "held-out")
    assert not Evaluation.objects.exists()  # not an evaluation corpus yet: nothing evaluated

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        set_evaluation(corpus=held_out, is_evaluation=True)
    assert len(callbacks) == 2
    assert sorted(Evaluation.objects.values_list("version", "corpus")) == [
        (first.pk, held_out.pk), (second.pk, held_out.pk)]

    with django_capture_on_commit_callbacks() as callbacks:  # again, and off and on: no more
        assert evaluate_everything_on(corpus=held_out) == []
        set_evaluation(corpus=held_out, is_evaluation=False)
        set_evaluation(corpus=held_out, is_evaluation=True)
    assert callbacks == [] and Evaluation.objects.count() == 2
    for evaluation in Evaluation.objects.all():
        run_evaluation(evaluation_id=evaluation.pk)
    assert set(Evaluation.objects.values_list("status", flat=True)) == {"succeeded"}


def test_uploading_an_evaluation_corpus_queues_the_versions_that_exist(corpus):
    version = train(corpus).versions.get()
    held_out = import_text(sample_text(5_000, offset=100_000), "held-out", is_evaluation=True)
    assert held_out.is_evaluation
    assert list(Evaluation.objects.values_list("version", "corpus", "status")) == [
        (version.pk, held_out.pk, "queued")]


def test_a_failed_evaluation_is_queued_again_by_the_next_request(corpus):
    version = train(corpus).versions.get()
    held_out = import_text(sample_text(5_000, offset=100_000), "held-out", is_evaluation=True)
    Evaluation.objects.update(status="failed", error="the worker ran out of memory")
    [again] = evaluate_everything_on(corpus=held_out)
    assert (again.version, again.status) == (version, "queued")
    assert request_evaluation(version=version, corpus=held_out).pk == again.pk
    assert Evaluation.objects.get().status == "queued"


def test_a_version_is_evaluated_on_request_only_on_an_evaluation_corpus(corpus):
    version = train(corpus).versions.get()
    other = import_text(sample_text(5_000, offset=100_000), "held-out")
    with pytest.raises(Invalid, match="not an evaluation corpus") as refused:
        request_evaluation(version=version, corpus=other)
    assert refused.value.field == "corpus" and not Evaluation.objects.exists()
    set_evaluation(corpus=other, is_evaluation=True)
    assert request_evaluation(version=version, corpus=other).status == "queued"
    assert Evaluation.objects.count() == 1


def test_an_evaluation_whose_worker_died_is_queued_again_and_then_computed(
        corpus, django_capture_on_commit_callbacks):
    import_text(sample_text(5_000, offset=100_000), "held-out", is_evaluation=True)
    train(corpus)
    evaluation = Evaluation.objects.get()
    long_ago = timezone.now() - timedelta(hours=2)
    Evaluation.objects.filter(pk=evaluation.pk).update(status="running", started_at=long_ago)

    run_evaluation(evaluation_id=evaluation.pk)  # a redelivery does not take it over
    assert Evaluation.objects.get(pk=evaluation.pk).status == "running"
    with django_capture_on_commit_callbacks() as callbacks:
        assert reap_evaluations(stale_seconds=3600) == [evaluation.pk]
    assert len(callbacks) == 1 and Evaluation.objects.get(pk=evaluation.pk).status == "queued"

    run_evaluation(evaluation_id=evaluation.pk)
    assert Evaluation.objects.get(pk=evaluation.pk).status == "succeeded"


def test_an_evaluation_whose_task_was_lost_is_sent_again_once_per_wait(
        corpus, django_capture_on_commit_callbacks, settings):
    import_text(sample_text(5_000, offset=100_000), "held-out", is_evaluation=True)
    train(corpus)  # queues the evaluation; suppose its task never reached the broker
    evaluation = Evaluation.objects.get()
    with django_capture_on_commit_callbacks() as callbacks:
        assert reap_evaluations() == []  # just sent: not yet
    settings.EVALUATION_RESEND_SECONDS = 60
    Evaluation.objects.filter(pk=evaluation.pk).update(
        sent_at=timezone.now() - timedelta(minutes=5))
    with django_capture_on_commit_callbacks() as callbacks:
        assert reap_evaluations() == [evaluation.pk]
        assert reap_evaluations() == []  # once per wait, not at every reap
    assert len(callbacks) == 1
    run_evaluation(evaluation_id=evaluation.pk)
    assert Evaluation.objects.get(pk=evaluation.pk).status == "succeeded"


def test_evaluate_version_stores_the_core_metrics(corpus, settings):
    version = train(corpus).versions.get()
    held_out = import_text(sample_text(5_000, offset=100_000), "held-out")

    evaluation = evaluate_version(version=version, corpus=held_out)

    from tokenizers_app.bpe.evaluation import evaluate
    expected = evaluate(version.load_tokenizer(), held_out.path.open(encoding="utf-8",
                                                                     newline=""))
    expected.pop("encode_throughput_mb_s")
    stored = dict(evaluation.metrics)
    assert stored.pop("encode_throughput_mb_s") > 0
    assert json.loads(json.dumps(stored)) == json.loads(json.dumps(expected))


def test_rendered_download_files_are_the_same_each_time_and_kept_nowhere_beside_the_store(
        corpus):
    """(They were once cached under ``MEDIA_ROOT/exports`` with a local store; the download
    ``render_download`` stores is the one copy kept, whichever the store.)"""
    version = train(corpus).versions.get()

    files = render_tokenizer_files(version=version, format="tiktoken")
    again = render_tokenizer_files(version=version, format="tiktoken")

    assert files == again == dumps_tokenizer(version.load_tokenizer(), "tiktoken", "prose-bpe")
    assert media_files("exports") == []


def test_the_leaderboard_ranks_versions_by_compression_ratio_per_evaluation_corpus(corpus):
    import_text(sample_text(6_000, offset=100_000), "held-out", is_evaluation=True)
    small = train(corpus, "small", vocab_size=300).versions.get()
    large = train(corpus, "large", vocab_size=600).versions.get()
    for evaluation in Evaluation.objects.all():
        run_evaluation(evaluation_id=evaluation.pk)

    ranked = list(Evaluation.objects.leaderboard())
    assert [e.version for e in ranked] == [large, small]
    assert ranked[0].compression_ratio == ranked[0].metrics["compression_ratio"] > \
        ranked[1].compression_ratio
    assert Evaluation.objects.of([small, large], ranked[0].corpus)[small.pk] == ranked[1]


def test_a_missing_corpus_file_fails_the_evaluation_in_words_without_a_traceback(corpus, caplog):
    version = train(corpus).versions.get()
    held_out = import_text(sample_text(5_000, offset=100_000), "held-out")
    held_out.path.unlink()

    evaluation = evaluate_version(version=version, corpus=held_out)

    assert evaluation.status == "failed"
    assert evaluation.error.startswith("the corpus file of 'held-out' cannot be read (No such")
    assert "Traceback" not in caplog.text and all(r.exc_info is None for r in caplog.records)


# -- a library that panics ----------------------------------------------------------------------

PANICS = r"(?:(?:x|x)+)+y|[\s\S]"  # the library's regex engine panics on a run of 30 x


def panicking_engine():
    """The library itself, in this process, with a ``Split`` that panics on a run of x."""
    from tests.engines.trained import llama_bpe_json
    from tokenizers_app.engines.hf import HFEngine

    doc = json.loads(llama_bpe_json())
    doc["pre_tokenizer"] = {"type": "Split", "pattern": {"Regex": PANICS},
                            "behavior": "Isolated", "invert": False}
    return HFEngine(json.dumps(doc).encode())


def panicking_version():
    """An ``hf`` version whose ``Split`` pre-tokenizer makes the library panic on a run of x,
    stored as a version written before imports were tried on such text."""
    from tokenizers_app.models import Tokenizer, TokenizerVersion
    from tokenizers_app.services.versions import add_version

    from django.db import transaction

    core = panicking_engine()  # not read_tokenizer: the import's check refuses it
    with transaction.atomic():  # as import_tokenizer writes a version
        return add_version(tokenizer=Tokenizer.objects.create(name="panics"), core=core,
                           source=TokenizerVersion.Source.IMPORT,
                           source_detail="written directly")


def test_a_library_panic_ends_the_evaluation_failed_in_words(corpus, client):
    held_out = import_text("plain words\n" + "x" * 40 + "\n", "held-out")
    set_evaluation(corpus=held_out, is_evaluation=True)
    version = panicking_version()
    evaluation = Evaluation.objects.get(version=version, corpus=held_out)

    run_evaluation(evaluation_id=evaluation.pk)  # the task's body, as a worker runs it

    evaluation.refresh_from_db()
    assert evaluation.status == "failed"
    assert evaluation.error.startswith("the tokenizer's library failed")  # in its sandbox's
    assert "PanicException" in evaluation.error  # words: the child caught the panic
    assert "Regex" in evaluation.error and "\n" not in evaluation.error
    page = client.get(f"/tokenizers/panics/{version.number}/").content.decode()
    assert "failed: the tokenizer&#x27;s library failed on this request (PanicException" in page


# -- whole corpora, and the opt-in cap ------------------------------------------------------------

def test_an_evaluation_reads_the_whole_corpus_by_default(corpus, settings):
    assert settings.EVALUATION_MAX_BYTES == 0
    held_out = import_text(sample_text(40_000, offset=100_000), "held-out", is_evaluation=True)
    version = train(corpus).versions.get()
    evaluation = evaluate_version(version=version, corpus=held_out)
    assert evaluation.status == "succeeded", evaluation.error
    assert evaluation.metrics["bytes"] == held_out.size_bytes
    assert "first_megabytes" not in evaluation.metrics


def test_a_capped_evaluation_is_labelled_first_n_mb_on_the_pages_and_in_the_api(
        corpus, settings, client):
    settings.EVALUATION_MAX_BYTES = 4096  # 0.0039 MB: the corpus is larger
    held_out = import_text(sample_text(40_000, offset=100_000), "held-out", is_evaluation=True)
    version = train(corpus).versions.get()
    evaluation = evaluate_version(version=version, corpus=held_out)
    assert evaluation.status == "succeeded", evaluation.error
    assert evaluation.metrics["bytes"] < held_out.size_bytes
    assert evaluation.metrics["first_megabytes"] == 0.00391
    settings.EVALUATION_MAX_BYTES = 3 * 1024**2 // 2  # a cap above this corpus: no label
    evaluate_version(version=version, corpus=held_out)
    assert "first_megabytes" not in Evaluation.objects.get(pk=evaluation.pk).metrics
    Evaluation.objects.filter(pk=evaluation.pk).update(
        metrics={**evaluation.metrics, "first_megabytes": 1.5})  # as a 1.5 MB cap leaves it
    for url in ("/", f"/tokenizers/{version.tokenizer.name}/{version.number}/"):
        html = client.get(url).content.decode()
        assert "first 1.5 MB" in html, url
    answer = client.get(f"/api/tokenizers/{version.tokenizer.name}/versions/{version.number}")
    assert answer.json()["metrics"]["held-out"]["metrics"]["first_megabytes"] == 1.5
