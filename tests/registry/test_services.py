"""The workflows, called in this process (the worker-process tests are in test_tasks.py).

Tests here run inside a transaction that never commits, so ``delay_on_commit`` sends nothing:
where a test needs to see what would be enqueued it captures the on-commit callbacks.
"""

import io
import json
from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.utils import timezone
from hypothesis import HealthCheck, given, settings as hypothesis_settings, strategies as st

from tokenizers_app import services
from tokenizers_app.bpe import train_bpe
from tokenizers_app.bpe.formats import dumps_tokenizer
from tokenizers_app.bpe.pretokenize import PreTokenizer
from tokenizers_app.bpe.training import Ticker, count_pretokens
from tokenizers_app.models import (
    AliasMove,
    Corpus,
    CountPart,
    Evaluation,
    MergeRule,
    Tokenizer,
    TokenizerVersion,
    TrainingRun,
    VocabEntry,
    content_digest,
)

from .helpers import import_text, sample_text

pytestmark = pytest.mark.django_db

Status = TrainingRun.Status


def train(corpus, name="prose-bpe", vocab_size=400, **kwargs) -> TrainingRun:
    """Start a run and execute it here, as a worker would."""
    run = services.start_training_run(corpora=[corpus], tokenizer_name=name,
                                      vocab_size=vocab_size, **kwargs)
    services.execute_training_run(run_id=run.pk)
    run.refresh_from_db()
    return run


@pytest.fixture(autouse=True)
def media_root(settings, tmp_path):
    """A media folder per test, so that a test sees only its own files."""
    settings.MEDIA_ROOT = str(tmp_path / "media")


@pytest.fixture
def corpus():
    return import_text(sample_text(20_000), "prose")


@pytest.fixture
def staff():
    return User.objects.create_user("staff", is_staff=True)


@pytest.fixture
def member():
    return User.objects.create_user("member")


def media_files(*parts) -> list[Path]:
    from django.conf import settings

    folder = Path(settings.MEDIA_ROOT, *parts)
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


# -- importing corpora ----------------------------------------------------------------------------

class TrickleStream:
    """A binary stream that hands out a few bytes per read, so characters straddle reads."""

    def __init__(self, data: bytes, step: int = 3):
        self.data, self.step, self.offset = data, step, 0

    def read(self, size: int) -> bytes:
        chunk = self.data[self.offset:self.offset + min(size, self.step)]
        self.offset += len(chunk)
        return chunk


def test_import_corpus_stores_the_bytes_under_a_content_name_with_hash_and_counts():
    text = "héllo wörld\nΓειά σου κόσμε\nsecond line"
    corpus = services.import_corpus(stream=TrickleStream(text.encode()), name="mixed",
                                    original_filename="../../etc/passwd")

    assert corpus.path.read_bytes() == text.encode()
    assert corpus.path.name == f"{corpus.sha256}.txt"
    assert corpus.sha256 == __import__("hashlib").sha256(text.encode()).hexdigest()
    assert (corpus.size_bytes, corpus.line_count, corpus.char_count) == (
        len(text.encode()), 3, len(text))
    assert set(corpus.scripts) == {"Latin", "Greek"}
    assert corpus.original_filename == "../../etc/passwd"
    assert media_files("corpora", "incoming") == []


def test_importing_the_same_bytes_twice_gives_one_corpus():
    first = import_text("same text\n", "first")
    second = import_text("same text\n", "second")

    assert second.pk == first.pk and second.name == "first"
    assert Corpus.objects.count() == 1


def test_a_corpus_that_is_not_utf8_is_refused_naming_the_byte_offset_and_leaves_nothing():
    data = "ok line\n".encode() * 1000 + b"caf\xe9\n"

    with pytest.raises(ValueError, match=r"not valid UTF-8: byte 0xe9 at byte offset 8003"):
        services.import_corpus(stream=TrickleStream(data, step=7), name="latin1")

    assert not Corpus.objects.exists()
    assert media_files() == []


def test_a_corpus_whose_row_cannot_be_written_leaves_no_file(monkeypatch):
    def fail(**kwargs):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(Corpus.objects, "create", fail)
    with pytest.raises(RuntimeError):
        services.import_corpus(stream=io.BytesIO(b"some text\n"), name="lost")

    assert media_files("corpora") == []


def test_a_corpus_ending_in_half_a_character_is_refused():
    with pytest.raises(ValueError, match=r"byte 0xc3 at byte offset 3"):
        services.import_corpus(stream=io.BytesIO("abcé".encode()[:-1]), name="cut")
    assert not Corpus.objects.exists()


def test_an_empty_corpus_is_refused():
    with pytest.raises(ValueError, match="the corpus is empty"):
        import_text("", "empty")
    assert not Corpus.objects.exists()
    assert media_files() == []


def test_a_corpus_over_the_size_cap_is_refused(settings):
    settings.CORPUS_MAX_BYTES = 1000

    with pytest.raises(ValueError, match="larger than the limit of 1000 bytes"):
        import_text("x" * 1001, "big")

    assert not Corpus.objects.exists()
    assert media_files() == []


def test_a_corpus_name_taken_by_other_content_is_refused(corpus):
    with pytest.raises(ValueError, match="already exists with other content"):
        import_text("other text", corpus.name)
    assert Corpus.objects.count() == 1


@pytest.mark.parametrize("name", ["", "has space", "a@b", "-dash-first", "x" * 101])
def test_a_corpus_name_that_is_not_valid_is_refused(name):
    with pytest.raises(ValueError, match="name .* is not valid"):
        import_text("text", name)
    assert not Corpus.objects.exists()


# -- starting runs --------------------------------------------------------------------------------

def test_start_training_run_commits_the_run_then_enqueues_its_task(
        corpus, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        run = services.start_training_run(corpora=["prose"], tokenizer_name="prose-bpe",
                                          vocab_size=300, special_tokens=["<s>"], pattern="gpt4",
                                          sweep=[280, 290])

    assert len(callbacks) == 1
    assert (run.status, run.attempt, run.vocab_size, run.pattern) == ("queued", 0, 300, "gpt4")
    assert run.special_tokens == ["<s>"] and run.sweep == [280, 290]
    assert list(run.corpora.all()) == [corpus]


@pytest.mark.parametrize("kwargs, message", [
    ({"vocab_size": 255}, r"vocab size 255 is out of bounds: .* from 256"),
    ({"vocab_size": 256, "special_tokens": ["<s>"]}, r"out of bounds: .* from 257"),
    ({"vocab_size": 2_000_000}, r"vocab size 2000000 is out of bounds: .* to 1000000"),
    ({"vocab_size": "500"}, r"vocab size '500' is out of bounds"),
    ({"corpora": ["nope"]}, r"no corpus named 'nope' \(known corpora: prose\)"),
    ({"corpora": []}, r"choose at least one corpus"),
    ({"special_tokens": [""]}, r"special tokens must be non-empty strings, got ''"),
    ({"special_tokens": ["<s>", "<s>"]}, r"special token '<s>' is listed twice"),
    ({"pattern": "(unclosed"}, r"pattern '\(unclosed' does not compile"),
    ({"tokenizer_name": "bad name"}, r"tokenizer name 'bad name' is not valid"),
    ({"min_frequency": 0}, r"min frequency must be an integer >= 1"),
    ({"sweep": [5000]}, r"sweep vocab size 5000 must be an integer from 256 to 499"),
])
def test_bad_training_parameters_are_refused_before_any_row_is_written(corpus, kwargs, message):
    params = {"corpora": ["prose"], "tokenizer_name": "t", "vocab_size": 500, **kwargs}

    with pytest.raises(ValueError, match=message):
        services.start_training_run(**params)

    assert not TrainingRun.objects.exists()
    assert not Tokenizer.objects.exists()


# -- executing runs -------------------------------------------------------------------------------

def test_an_executed_run_saves_a_version_equal_to_train_bpe(corpus):
    run = train(corpus, vocab_size=500, special_tokens=["<|endoftext|>"])

    assert run.status == Status.SUCCEEDED, run.error
    version = run.versions.get()
    expected = train_bpe(corpus.path, 500, special_tokens=["<|endoftext|>"])
    loaded = version.load_tokenizer()
    assert (loaded.vocab, loaded.merges, loaded.merge_counts) == (
        expected.vocab, expected.merges, expected.merge_counts)
    assert loaded.special_ids == {"<|endoftext|>": 0}
    assert version.training_run == run and version.source == "training"
    assert VocabEntry.objects.filter(version=version, kind="special").count() == 1
    assert VocabEntry.objects.filter(version=version, kind="byte").count() == 256
    assert run.progress_done <= run.progress_total and run.stage == "save"


def test_executing_a_run_twice_creates_one_version(corpus):
    run = train(corpus)
    services.execute_training_run(run_id=run.pk)

    run.refresh_from_db()
    assert (run.status, run.attempt) == (Status.SUCCEEDED, 1)
    assert TokenizerVersion.objects.count() == 1


def test_a_second_run_with_the_same_result_gets_the_existing_version(corpus):
    first = train(corpus)
    second = train(corpus)

    assert second.status == Status.SUCCEEDED
    assert list(second.versions.all()) == list(first.versions.all())
    assert TokenizerVersion.objects.count() == 1


def test_versions_of_a_tokenizer_are_numbered_from_one(corpus):
    numbers = [train(corpus, vocab_size=size).versions.get().number for size in (300, 310, 320)]
    assert numbers == [1, 2, 3]


def test_a_sweep_registers_the_merge_prefixes_as_versions_equal_to_training_there(corpus):
    run = train(corpus, vocab_size=420, sweep=[300, 350])

    versions = list(run.versions.order_by("number"))
    assert [v.vocab_size for v in versions] == [300, 350, 420]
    for version in versions:
        expected = train_bpe(corpus.path, version.vocab_size)
        assert version.load_tokenizer().merges == expected.merges


def test_register_sweep_adds_prefix_versions_of_a_trained_version(corpus):
    version = train(corpus, vocab_size=400).versions.get()

    smaller = services.register_sweep(version=version, vocab_sizes=[300])

    assert [v.vocab_size for v in smaller] == [300]
    assert smaller[0].load_tokenizer().merges == version.load_tokenizer().merges[:44]


def test_a_run_that_fails_records_an_actionable_error_and_no_version(corpus):
    run = train(corpus, pattern=r"\w+")  # a custom pattern that drops the spaces

    assert run.status == Status.FAILED
    assert "is not lossless" in run.error
    assert not TokenizerVersion.objects.exists() and not MergeRule.objects.exists()


def test_a_cancel_noticed_during_training_leaves_the_run_cancelled_without_version(corpus):
    run = services.start_training_run(corpora=[corpus], tokenizer_name="t", vocab_size=400)
    TrainingRun.objects.filter(pk=run.pk).update(status=Status.QUEUED)
    original = services.RunReporter.write

    def cancel_then_write(self, **fields):
        TrainingRun.objects.filter(pk=self.run.pk).update(cancel_requested=True)
        original(self, **fields)

    services.RunReporter.write = cancel_then_write
    try:
        services.execute_training_run(run_id=run.pk)
    finally:
        services.RunReporter.write = original

    run.refresh_from_db()
    assert run.status == Status.CANCELLED
    assert not TokenizerVersion.objects.exists()


def test_cancelling_a_queued_run_means_it_never_executes(corpus):
    run = services.start_training_run(corpora=[corpus], tokenizer_name="t", vocab_size=400)

    services.cancel_training_run(run=run)
    services.execute_training_run(run_id=run.pk)

    run.refresh_from_db()
    assert (run.status, run.attempt) == (Status.CANCELLED, 0)
    assert not TokenizerVersion.objects.exists()


def test_an_attempt_that_lost_its_run_to_the_reaper_does_not_save(corpus):
    run = services.start_training_run(corpora=[corpus], tokenizer_name="t", vocab_size=400)
    stale = services._claim_run(run.pk)
    TrainingRun.objects.filter(pk=run.pk).update(status=Status.QUEUED)  # re-queued by the reaper
    services.execute_training_run(run_id=run.pk)  # attempt 2 finishes
    result = train_bpe(corpus.path, 400)

    with pytest.raises(services.LostRun):
        services.save_training_result(run=stale, reporter=services.RunReporter(stale),
                                      result=result)

    run.refresh_from_db()
    assert (run.status, run.attempt) == (Status.SUCCEEDED, 2)
    assert TokenizerVersion.objects.count() == 1


# -- the reaper -----------------------------------------------------------------------------------

def make_stale(run: TrainingRun, seconds: int = 600) -> None:
    TrainingRun.objects.filter(pk=run.pk).update(
        heartbeat_at=timezone.now() - timedelta(seconds=seconds))


def running_run(corpus, attempt: int = 1, **fields) -> TrainingRun:
    run = services.start_training_run(corpora=[corpus], tokenizer_name="t", vocab_size=400)
    TrainingRun.objects.filter(pk=run.pk).update(status=Status.RUNNING, attempt=attempt, **fields)
    run.refresh_from_db()
    return run


def test_the_reaper_requeues_a_running_run_whose_heartbeat_went_stale(
        corpus, django_capture_on_commit_callbacks):
    run = running_run(corpus)
    make_stale(run)

    with django_capture_on_commit_callbacks() as callbacks:
        outcome = services.reap_runs(stale_seconds=60)

    run.refresh_from_db()
    assert outcome["requeued"] == [run.pk] and len(callbacks) == 1
    assert run.status == Status.QUEUED
    services.execute_training_run(run_id=run.pk)
    run.refresh_from_db()
    assert (run.status, run.attempt) == (Status.SUCCEEDED, 2)


def test_the_reaper_leaves_runs_with_a_fresh_heartbeat_alone(corpus):
    run = running_run(corpus)
    make_stale(run, seconds=5)

    assert services.reap_runs(stale_seconds=60)["requeued"] == []
    run.refresh_from_db()
    assert run.status == Status.RUNNING


def test_the_reaper_fails_a_run_after_the_last_attempt_with_a_message(corpus):
    run = running_run(corpus, attempt=3)
    make_stale(run)

    assert services.reap_runs(stale_seconds=60, max_attempts=3)["failed"] == [run.pk]
    run.refresh_from_db()
    assert run.status == Status.FAILED
    assert "stopped responding 3 times" in run.error and "worker logs" in run.error


def test_the_reaper_cancels_a_stale_run_with_a_pending_cancel(corpus):
    run = running_run(corpus, cancel_requested=True)
    make_stale(run)

    assert services.reap_runs(stale_seconds=60)["cancelled"] == [run.pk]
    run.refresh_from_db()
    assert run.status == Status.CANCELLED


def test_the_reaper_sends_a_queued_run_again_when_its_task_seems_lost(
        corpus, django_capture_on_commit_callbacks):
    run = services.start_training_run(corpora=[corpus], tokenizer_name="t", vocab_size=400)
    make_stale(run)

    with django_capture_on_commit_callbacks() as callbacks:
        assert services.reap_runs(stale_seconds=60)["resent"] == [run.pk]
    assert len(callbacks) == 1


# -- fan-out counting -----------------------------------------------------------------------------

def fan_out(run_id: int, worker: str = "here") -> TrainingRun:
    """Execute a fanned-out run here: the plan, every count task, then the merge task."""
    services.execute_training_run(run_id=run_id)
    run = TrainingRun.objects.get(pk=run_id)
    for part in CountPart.objects.filter(run=run, attempt=run.attempt):
        services.count_corpus_part(part_id=part.pk, worker=worker)
    services.merge_counted_run(run_id=run_id, attempt=run.attempt)
    return TrainingRun.objects.get(pk=run_id)


def test_fanned_out_counts_equal_the_counts_of_one_process(settings):
    settings.FANOUT_MIN_BYTES, settings.FANOUT_PART_BYTES = 1000, 4000
    settings.FANOUT_KEEP_COUNTS = True
    corpus = import_text(sample_text(30_000).replace("\n\n", "<|endoftext|>"), "prose")
    run = services.start_training_run(corpora=[corpus], tokenizer_name="t", vocab_size=500,
                                      special_tokens=["<|endoftext|>"])

    run = fan_out(run.pk)

    assert run.status == Status.SUCCEEDED, run.error
    assert run.fanout_parts == CountPart.objects.filter(run=run).count() > 5
    specials = ["<|endoftext|>"]
    expected = count_pretokens(corpus.path, PreTokenizer("gpt2"), specials, Ticker(None, None), 1)
    assert services.merged_part_counts(run=run, attempt=1) == expected
    trained = train_bpe(corpus.path, 500, special_tokens=specials)
    assert run.versions.get().load_tokenizer().merges == trained.merges


def test_count_part_files_are_removed_after_the_run_by_default(settings, corpus):
    settings.FANOUT_MIN_BYTES, settings.FANOUT_PART_BYTES = 1000, 4000
    run = services.start_training_run(corpora=[corpus], tokenizer_name="t", vocab_size=300)

    assert fan_out(run.pk).status == Status.SUCCEEDED
    assert media_files("runs") == []


def test_a_count_task_delivered_twice_counts_its_part_once(settings, corpus,
                                                           django_capture_on_commit_callbacks):
    settings.FANOUT_MIN_BYTES, settings.FANOUT_PART_BYTES = 1000, 4000
    run = services.start_training_run(corpora=[corpus], tokenizer_name="t", vocab_size=300)
    services.execute_training_run(run_id=run.pk)
    parts = list(CountPart.objects.filter(run=run))

    with django_capture_on_commit_callbacks() as callbacks:
        for part in parts + parts[:1]:
            services.count_corpus_part(part_id=part.pk)

    run.refresh_from_db()
    assert len(callbacks) == 1  # the merge task, enqueued once, by the last part
    assert run.progress_done == corpus.size_bytes


@hypothesis_settings(max_examples=40, deadline=None,
                     suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pieces=st.lists(st.sampled_from(["a", "bc", " ", "\n", "\n\n", "é", "日本", "<s>", "<",
                                        "s>", "\t", "!!", "12"]), min_size=1, max_size=200),
       pattern=st.sampled_from(["gpt2", "gpt4", "none"]))
def test_counting_in_parts_equals_counting_in_one_process(settings, pieces, pattern):
    settings.FANOUT_MIN_BYTES, settings.FANOUT_PART_BYTES = 0, 7
    text = "".join(pieces)
    corpus = Corpus.objects.filter(name="h").first() or import_text(text, "h")
    corpus.path.write_text(text, encoding="utf-8")  # reuse one row: the text differs each time
    Corpus.objects.filter(pk=corpus.pk).update(size_bytes=len(text.encode()))
    run = services.start_training_run(corpora=[corpus], tokenizer_name="t", vocab_size=300,
                                      special_tokens=["<s>"], pattern=pattern)
    services.execute_training_run(run_id=run.pk)
    run.refresh_from_db()
    total = Counter()
    for part in CountPart.objects.filter(run=run):
        total.update(services.count_part_text(part, Ticker(None, None)))

    expected = count_pretokens(corpus.path, PreTokenizer(pattern), ["<s>"], Ticker(None, None), 1)
    assert {word.encode(): n for word, n in total.items()} == expected


# -- versions, digests, imports -------------------------------------------------------------------

def test_importing_exported_files_gives_back_the_same_version(corpus):
    version = train(corpus, vocab_size=400, special_tokens=["<|endoftext|>"]).versions.get()
    tokenizer = version.load_tokenizer()

    for format in ("native", "hf", "gpt2", "tiktoken"):
        files = dumps_tokenizer(tokenizer, format)
        imported = services.import_tokenizer(files=files, tokenizer_name="prose-bpe")
        assert imported.pk == version.pk, format


def test_an_imported_tokenizer_becomes_a_new_version_with_its_source(corpus):
    tokenizer = train_bpe(corpus.path, 350).tokenizer()
    files = dumps_tokenizer(tokenizer, "gpt2")

    version = services.import_tokenizer(files=files, tokenizer_name="imported")

    assert (version.number, version.source, version.status) == (1, "import", "ready")
    assert version.source_detail == "imported from merges.txt, vocab.json"
    loaded = version.load_tokenizer()
    assert loaded.merges == tokenizer.merges and loaded.merge_counts is None
    assert loaded.encode("Hello world") == tokenizer.encode("Hello world")


def test_importing_files_that_are_not_a_tokenizer_leaves_no_rows():
    with pytest.raises(ValueError):
        services.import_tokenizer(files={"notes.txt": b"hello"}, tokenizer_name="junk")
    assert not Tokenizer.objects.exists() and not TokenizerVersion.objects.exists()


def test_the_digest_ignores_merge_counts(corpus):
    trained = train_bpe(corpus.path, 300).tokenizer()
    without_counts = type(trained)(trained.vocab, trained.merges, [], trained.pattern)
    assert content_digest(trained) == content_digest(without_counts)


def test_a_ready_version_refuses_content_changes(corpus):
    version = train(corpus).versions.get()
    version.pattern = "gpt4"
    with pytest.raises(ValueError, match="immutable; cannot change pattern"):
        version.save()


# -- lifecycle and aliases ------------------------------------------------------------------------

def test_staff_publish_and_deprecate_versions(corpus, staff):
    version = train(corpus).versions.get()

    services.publish_version(version=version, user=staff)
    assert TokenizerVersion.objects.get(pk=version.pk).lifecycle == "published"
    services.deprecate_version(version=version, user=staff)
    assert TokenizerVersion.objects.get(pk=version.pk).lifecycle == "deprecated"


def test_other_users_cannot_publish_deprecate_annotate_or_move_aliases(corpus, member):
    version = train(corpus).versions.get()

    for action in (lambda: services.publish_version(version=version, user=member),
                   lambda: services.deprecate_version(version=version, user=member),
                   lambda: services.annotate_version(version=version, notes="x", user=member),
                   lambda: services.move_alias(version=version, name="production", user=member),
                   lambda: services.publish_version(version=version, user=None)):
        with pytest.raises(PermissionDenied, match="only staff"):
            action()
    version.refresh_from_db()
    assert (version.lifecycle, version.notes, version.aliases.count()) == ("draft", "", 0)


def test_every_alias_move_is_recorded_with_who_and_from_where(corpus, staff):
    first = train(corpus, vocab_size=300).versions.get()
    second = train(corpus, vocab_size=320).versions.get()

    services.move_alias(version=first, name="production", user=staff)
    alias = services.move_alias(version=second, name="production", user=staff)

    assert alias.version == second
    moves = [(m.from_version, m.to_version, m.moved_by) for m in AliasMove.objects.order_by("id")]
    assert moves == [(None, first, staff), (first, second, staff)]
    assert TokenizerVersion.objects.resolve("prose-bpe@production") == second


@pytest.mark.parametrize("name", ["3", "Prod", "a b", ""])
def test_alias_names_that_could_be_misread_are_refused(corpus, staff, name):
    version = train(corpus).versions.get()
    with pytest.raises(ValueError, match="alias .* is not valid"):
        services.move_alias(version=version, name=name, user=staff)


def test_refs_resolve_by_number_alias_or_latest_and_explain_misses(corpus, staff):
    first = train(corpus, vocab_size=300).versions.get()
    second = train(corpus, vocab_size=320).versions.get()
    services.move_alias(version=first, name="candidate", user=staff)
    resolve = TokenizerVersion.objects.resolve

    assert [resolve("prose-bpe@1"), resolve("prose-bpe@candidate"), resolve("prose-bpe")] == [
        first, first, second]
    with pytest.raises(ValueError, match=r"has no version 7 \(versions: 1, 2\)"):
        resolve("prose-bpe@7")
    with pytest.raises(ValueError, match=r"has no alias 'prod' \(aliases: candidate\)"):
        resolve("prose-bpe@prod")
    with pytest.raises(ValueError, match="no tokenizer named 'nope'"):
        resolve("nope@1")


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
    services.run_evaluation(evaluation_id=evaluation.pk)
    evaluation.refresh_from_db()
    assert evaluation.status == "succeeded", evaluation.error
    assert evaluation.metrics["compression_ratio"] > 1


def test_an_evaluation_whose_worker_died_is_queued_again_and_then_computed(
        corpus, django_capture_on_commit_callbacks):
    import_text(sample_text(5_000, offset=100_000), "held-out", is_evaluation=True)
    train(corpus)
    evaluation = Evaluation.objects.get()
    long_ago = timezone.now() - timedelta(hours=2)
    Evaluation.objects.filter(pk=evaluation.pk).update(status="running", started_at=long_ago)

    services.run_evaluation(evaluation_id=evaluation.pk)  # a redelivery does not take it over
    assert Evaluation.objects.get(pk=evaluation.pk).status == "running"
    with django_capture_on_commit_callbacks() as callbacks:
        assert services.reap_evaluations(stale_seconds=3600) == [evaluation.pk]
    assert len(callbacks) == 1 and Evaluation.objects.get(pk=evaluation.pk).status == "queued"

    services.run_evaluation(evaluation_id=evaluation.pk)
    assert Evaluation.objects.get(pk=evaluation.pk).status == "succeeded"


def test_evaluate_version_stores_the_core_metrics(corpus, settings):
    version = train(corpus).versions.get()
    held_out = import_text(sample_text(5_000, offset=100_000), "held-out")

    evaluation = services.evaluate_version(version=version, corpus=held_out)

    from tokenizers_app.bpe.metrics import evaluate
    expected = evaluate(version.load_tokenizer(), held_out.path.open(encoding="utf-8",
                                                                      newline=""))
    expected.pop("encode_throughput_mb_s")
    stored = dict(evaluation.metrics)
    assert stored.pop("encode_throughput_mb_s") > 0
    assert json.loads(json.dumps(stored)) == json.loads(json.dumps(expected))


def test_rendered_download_files_are_cached_by_digest(corpus):
    version = train(corpus).versions.get()

    files = services.render_tokenizer_files(version=version, format="tiktoken")
    again = services.render_tokenizer_files(version=version, format="tiktoken")

    assert files == again == dumps_tokenizer(version.load_tokenizer(), "tiktoken", "prose-bpe")
    assert sorted(p.name for p in media_files("exports", version.digest)) == sorted(files)
