"""Counting in parts on several workers (``services.fanout``)."""

from collections import Counter

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from tests.registry.helpers import import_text, media_files, sample_text
from tokenizers_app.bpe import train_bpe
from tokenizers_app.bpe.counting import count_range
from tokenizers_app.bpe.pretokenize import PreTokenizer
from tokenizers_app.bpe.training import Ticker, count_pretokens
from tokenizers_app.models import (
    Corpus,
    CountPart,
    TrainingRun,
)
from tokenizers_app.services.fanout import (
    count_corpus_part,
    merge_counted_run,
    merged_part_counts,
)
from tokenizers_app.services.runs import (
    execute_training_run,
    start_training_run,
)

pytestmark = pytest.mark.django_db

Status = TrainingRun.Status


# -- fan-out counting -----------------------------------------------------------------------------

def fan_out(run_id: int, worker: str = "here") -> TrainingRun:
    """Execute a fanned-out run here: the plan, every count task, then the merge task."""
    execute_training_run(run_id=run_id)
    run = TrainingRun.objects.get(pk=run_id)
    for part in CountPart.objects.filter(run=run, attempt=run.attempt):
        count_corpus_part(part_id=part.pk, worker=worker)
    merge_counted_run(run_id=run_id, attempt=run.attempt)
    return TrainingRun.objects.get(pk=run_id)


def test_fanned_out_counts_equal_the_counts_of_one_process(settings):
    settings.FANOUT_MIN_BYTES, settings.FANOUT_PART_BYTES = 1000, 4000
    settings.FANOUT_KEEP_COUNTS = True
    corpus = import_text(sample_text(30_000).replace("\n\n", "<|endoftext|>"), "prose")
    run = start_training_run(corpora=[corpus], tokenizer_name="t", vocab_size=500,
                             special_tokens=["<|endoftext|>"])

    run = fan_out(run.pk)

    assert run.status == Status.SUCCEEDED, run.error
    assert run.fanout_parts == CountPart.objects.filter(run=run).count() > 5
    specials = ["<|endoftext|>"]
    expected = count_pretokens(corpus.path, PreTokenizer("gpt2"), specials, Ticker(None, None), 1)
    assert merged_part_counts(run=run, attempt=1) == expected
    trained = train_bpe(corpus.path, 500, special_tokens=specials)
    assert run.versions.get().load_tokenizer().merges == trained.merges


def test_count_part_files_are_removed_after_the_run_by_default(settings, corpus):
    settings.FANOUT_MIN_BYTES, settings.FANOUT_PART_BYTES = 1000, 4000
    run = start_training_run(corpora=[corpus], tokenizer_name="t", vocab_size=300)

    assert fan_out(run.pk).status == Status.SUCCEEDED
    assert media_files("runs") == []


def test_a_count_task_delivered_twice_counts_its_part_once(settings, corpus,
                                                           django_capture_on_commit_callbacks):
    settings.FANOUT_MIN_BYTES, settings.FANOUT_PART_BYTES = 1000, 4000
    run = start_training_run(corpora=[corpus], tokenizer_name="t", vocab_size=300)
    execute_training_run(run_id=run.pk)
    parts = list(CountPart.objects.filter(run=run))

    with django_capture_on_commit_callbacks() as callbacks:
        for part in parts + parts[:1]:
            count_corpus_part(part_id=part.pk)

    run.refresh_from_db()
    assert len(callbacks) == 1  # the merge task, enqueued once, by the last part
    assert run.progress_done == corpus.size_bytes


@hypothesis_settings(max_examples=40, deadline=None,
                     suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(fragments=st.lists(st.sampled_from(["a", "bc", " ", "\n", "\n\n", "é", "日本", "<s>", "<",
                                           "s>", "\t", "!!", "12"]), min_size=1, max_size=200),
       pattern=st.sampled_from(["gpt2", "gpt4", "none"]))
def test_counting_in_parts_equals_counting_in_one_process(settings, fragments, pattern):
    settings.FANOUT_MIN_BYTES, settings.FANOUT_PART_BYTES = 0, 7
    text = "".join(fragments)
    corpus = Corpus.objects.filter(name="h").first() or import_text("seed text\n", "h")
    corpus.path.write_text(text, encoding="utf-8")  # reuse one row: the text differs each time
    Corpus.objects.filter(pk=corpus.pk).update(size_bytes=len(text.encode()))
    run = start_training_run(corpora=[corpus], tokenizer_name="t", vocab_size=300,
                             special_tokens=["<s>"], pattern=pattern)
    execute_training_run(run_id=run.pk)
    run.refresh_from_db()
    total = Counter()
    for part in CountPart.objects.filter(run=run):
        total.update(count_range(part.corpus.path, part.start, part.end, pattern, ["<s>"],
                                 lambda done, total: None))

    expected = count_pretokens(corpus.path, PreTokenizer(pattern), ["<s>"], Ticker(None, None), 1)
    assert {word.encode(): n for word, n in total.items()} == expected


# -- fan-out evaluation ---------------------------------------------------------------------------

def evaluate_in_parts(evaluation_id: int, worker: str = "here", skip: int | None = None):
    """Execute a fanned-out evaluation here: the plan, every part task (but ``skip``: a part
    whose worker died), then the merge task once every part is done."""
    from tokenizers_app.models import Evaluation, EvaluationPart
    from tokenizers_app.services.evaluation_fanout import (
        evaluate_corpus_part,
        merge_evaluation_parts,
    )
    from tokenizers_app.services.evaluations import run_evaluation

    run_evaluation(evaluation_id=evaluation_id)
    evaluation = Evaluation.objects.get(pk=evaluation_id)
    parts = EvaluationPart.objects.filter(evaluation=evaluation, attempt=evaluation.attempts)
    for part in parts.order_by("index"):
        if part.index != skip:
            evaluate_corpus_part(part_id=part.pk, worker=worker)
    if not parts.filter(done=False).exists():
        merge_evaluation_parts(evaluation_id=evaluation_id, attempt=evaluation.attempts)
    return Evaluation.objects.get(pk=evaluation_id)


@pytest.mark.parametrize("kind", ["byte_bpe", "char_bpe", "hf"])
def test_a_fanned_out_evaluation_equals_the_one_process_evaluation(settings, kind):
    from tests.engines.trained import llama_bpe_json
    from tests.registry.helpers import train
    from tokenizers_app.models import Evaluation, EvaluationPart
    from tokenizers_app.services.evaluations import evaluate_version
    from tokenizers_app.services.versions import import_tokenizer

    corpus = import_text(sample_text(20_000), "prose")
    text = sample_text(60_000, offset=100_000)
    held_out = import_text(text, "held-out")
    if kind == "hf":
        version = import_tokenizer(files={"tokenizer.json": llama_bpe_json()},
                                   tokenizer_name="llama")
    else:
        version = train(corpus, **({"algorithm": "char_bpe"} if kind == "char_bpe" else {})) \
            .versions.get()
    alone = evaluate_version(version=version, corpus=held_out)
    assert alone.status == "succeeded", alone.error
    one_process = dict(alone.metrics)
    Evaluation.objects.filter(pk=alone.pk).update(status="queued", metrics={})

    settings.FANOUT_MIN_BYTES, settings.FANOUT_PART_BYTES = 1000, 8000
    evaluation = evaluate_in_parts(alone.pk)

    assert evaluation.status == "succeeded", evaluation.error
    assert evaluation.fanout_parts == evaluation.metrics["parts"] > 3
    assert EvaluationPart.objects.filter(evaluation=evaluation, done=True).count() == \
        evaluation.fanout_parts
    for name, value in one_process.items():
        if name != "encode_throughput_mb_s":
            assert evaluation.metrics[name] == value, name
    assert [w[0] for w in evaluation.word_tokens[:20]] == [w[0] for w in alone.word_tokens[:20]]
    assert media_files("evaluations") == []  # the part files are removed once merged


def test_a_part_whose_worker_died_is_the_only_one_evaluated_again(settings):
    """The reaper queues the evaluation again; its new attempt carries over the parts done and
    evaluates the one left."""
    from tests.registry.helpers import train
    from tokenizers_app.models import Evaluation, EvaluationPart
    from tokenizers_app.services.evaluations import evaluate_version, reap_evaluations

    corpus = import_text(sample_text(20_000), "prose")
    held_out = import_text(sample_text(60_000, offset=100_000), "held-out")
    version = train(corpus).versions.get()
    expected = evaluate_version(version=version, corpus=held_out).metrics
    Evaluation.objects.filter(version=version).update(status="queued", metrics={}, attempts=0)
    settings.FANOUT_MIN_BYTES, settings.FANOUT_PART_BYTES = 1000, 8000
    [evaluation] = Evaluation.objects.filter(version=version)

    evaluation = evaluate_in_parts(evaluation.pk, worker="killed", skip=2)
    assert evaluation.status == "running" and evaluation.attempts == 1

    assert reap_evaluations(stale_seconds=0) == [evaluation.pk]
    evaluation = evaluate_in_parts(evaluation.pk, worker="again")
    assert evaluation.status == "succeeded", evaluation.error
    second = EvaluationPart.objects.filter(evaluation=evaluation, attempt=2)
    assert list(second.exclude(worker="(carried over)").values_list("index", flat=True)) == [2]
    assert {name: value for name, value in evaluation.metrics.items()
            if name not in ("encode_throughput_mb_s", "parts")} == \
        {name: value for name, value in expected.items() if name != "encode_throughput_mb_s"}


def test_a_running_evaluation_in_parts_shows_its_parts_and_bytes_done(settings, client):
    from tests.registry.helpers import train
    from tokenizers_app.models import Evaluation

    corpus = import_text(sample_text(20_000), "prose")
    held_out = import_text(sample_text(60_000, offset=100_000), "held-out")
    version = train(corpus).versions.get()
    evaluation = Evaluation.objects.create(version=version, corpus=held_out)
    settings.FANOUT_MIN_BYTES, settings.FANOUT_PART_BYTES = 1000, 8000
    evaluation = evaluate_in_parts(evaluation.pk, skip=1)
    progress = evaluation.progress
    assert progress["parts"] == evaluation.fanout_parts
    assert progress["parts_done"] == progress["parts"] - 1
    done_parts = evaluation.parts.filter(attempt=evaluation.attempts, done=True)
    assert progress["bytes_done"] == sum(part.size for part in done_parts)
    assert progress["bytes"] == held_out.size_bytes > progress["bytes_done"] > 0
    html = client.get(f"/tokenizers/{version.tokenizer.name}/{version.number}/").content.decode()
    assert f"{progress['parts_done']} of {progress['parts']} parts" in html


def test_an_evaluation_in_parts_is_not_reaped_while_its_parts_go_on(settings):
    """Each part started or done moves the heartbeat on (``started_at`` stays, for the time
    left): a long evaluation in parts is taken for dead only when its parts stop."""
    from datetime import timedelta

    from django.utils import timezone

    from tests.registry.helpers import train
    from tokenizers_app.models import Evaluation
    from tokenizers_app.services.evaluation_fanout import evaluate_corpus_part
    from tokenizers_app.services.evaluations import reap_evaluations, run_evaluation

    corpus = import_text(sample_text(20_000), "prose")
    held_out = import_text(sample_text(60_000, offset=100_000), "held-out")
    evaluation = Evaluation.objects.create(version=train(corpus).versions.get(),
                                           corpus=held_out)
    settings.FANOUT_MIN_BYTES, settings.FANOUT_PART_BYTES = 1000, 8000
    run_evaluation(evaluation_id=evaluation.pk)
    long_ago = timezone.now() - timedelta(hours=2)
    Evaluation.objects.filter(pk=evaluation.pk).update(started_at=long_ago,
                                                       heartbeat_at=long_ago)
    first = evaluation.parts.order_by("index").first()
    evaluate_corpus_part(part_id=first.pk, worker="here")
    assert Evaluation.objects.get(pk=evaluation.pk).heartbeat_at > long_ago
    assert Evaluation.objects.get(pk=evaluation.pk).started_at == long_ago
    assert reap_evaluations(stale_seconds=3600) == []
