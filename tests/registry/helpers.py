"""Shared helpers for the registry tests: sample text, corpora, waiting for workers."""

import io
import pydoc_data.topics
import random
import time
from pathlib import Path
from unittest import mock

from tokenizers_app.models import TrainingRun
from tokenizers_app.services.corpora import import_corpus
from tokenizers_app.services.runs import execute_training_run, start_training_run

# Real English prose that ships with every Python: the pydoc help topics (about 450 KB).
PROSE = "".join(pydoc_data.topics.topics[key] for key in sorted(pydoc_data.topics.topics))


def sample_text(chars: int, offset: int = 0) -> str:
    """``chars`` characters of prose, repeating it when more is asked than there is."""
    text = PROSE * (1 + (offset + chars) // len(PROSE))
    return text[offset:offset + chars]


def made_up_words(chars: int, seed: int = 0) -> str:
    """``chars`` characters of made-up lowercase words (the same for the same seed): unlike the
    prose, nearly every word is new, so training learns tens of thousands of merges from a few
    MB, and no word's tokens are cached while encoding."""
    rng = random.Random(seed)
    words, size = [], 0
    while size < chars:
        word = "".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(2, 9)))
        words.append(word + ("\n" if rng.random() < 0.08 else " "))
        size += len(words[-1])
    return "".join(words)[:chars]


def import_text(text: str, name: str, **kwargs):
    return import_corpus(stream=io.BytesIO(text.encode()), name=name, **kwargs)


def wait_until(predicate, timeout: float, message: str, interval: float = 0.05):
    """Poll ``predicate`` until it returns something true; fail with ``message`` on timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s: {message}")


def wait_for_run(run: TrainingRun, statuses=TrainingRun.FINISHED, timeout: float = 60,
                 worker=None) -> TrainingRun:
    """Wait until the run reaches one of ``statuses``; the worker's log is shown on failure."""
    def reached():
        run.refresh_from_db()
        return run.status in statuses

    try:
        wait_until(reached, timeout, f"run {run.pk} to be {'/'.join(statuses)} (it is "
                   f"{run.status}, stage {run.stage!r}, error {run.error!r})")
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n--- worker log ---\n{worker.log() if worker else ''}")
    return run


def train(corpus, name="prose-bpe", vocab_size=400, **kwargs) -> TrainingRun:
    """Start a run and execute it here, as a worker would."""
    run = start_training_run(corpora=[corpus], tokenizer_name=name,
                             vocab_size=vocab_size, **kwargs)
    execute_training_run(run_id=run.pk)
    run.refresh_from_db()
    return run


def media_files(*parts) -> list[Path]:
    from django.conf import settings

    folder = Path(settings.MEDIA_ROOT, *parts)
    return sorted(p for p in folder.rglob("*") if p.is_file()) if folder.exists() else []


def build_registry_data(settings, tmp_path) -> dict:
    """Two corpora (one for evaluation), two trained versions of one tokenizer evaluated on it,
    a member and a staff user; built in this process (no worker needed)."""
    from django.contrib.auth import get_user_model

    from tokenizers_app.models import Evaluation
    from tokenizers_app.services.evaluations import run_evaluation

    django_user_model = get_user_model()
    settings.MEDIA_ROOT = str(tmp_path / "media")
    # Nothing is sent to the broker: in a test that commits (live_server), a worker left running
    # by another test would otherwise race this process for the runs and evaluations.
    with mock.patch("celery.app.task.Task.apply_async"):
        corpus = import_text(sample_text(30_000), "prose")
        held_out = import_text(sample_text(8_000, offset=200_000), "held-out",
                               is_evaluation=True)
        small = train(corpus, "prose-bpe", vocab_size=300, special_tokens=["<|endoftext|>"])
        large = train(corpus, "prose-bpe", vocab_size=600, special_tokens=["<|endoftext|>"])
        for evaluation in Evaluation.objects.all():
            run_evaluation(evaluation_id=evaluation.pk)
    return {"corpus": corpus, "held_out": held_out, "small": small.versions.get(),
            "large": large.versions.get(), "runs": [small, large],
            "member": django_user_model.objects.create_user("member", password="pw-member-1"),
            "staff": django_user_model.objects.create_user("staff", password="pw-staff-1",
                                                           is_staff=True)}
