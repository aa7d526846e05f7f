"""Shared helpers for the registry tests: sample text, corpora, waiting for workers."""

import io
import time

import pydoc_data.topics

from tokenizers_app import services
from tokenizers_app.models import TrainingRun

# Real English prose that ships with every Python: the pydoc help topics (about 450 KB).
PROSE = "".join(pydoc_data.topics.topics[key] for key in sorted(pydoc_data.topics.topics))


def sample_text(chars: int, offset: int = 0) -> str:
    """``chars`` characters of prose, repeating it when more is asked than there is."""
    text = PROSE * (1 + (offset + chars) // len(PROSE))
    return text[offset:offset + chars]


def import_text(text: str, name: str, **kwargs):
    return services.import_corpus(stream=io.BytesIO(text.encode()), name=name, **kwargs)


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
