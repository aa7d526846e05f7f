"""The periodic sweep of what dead work left in the store, over ``store.list()`` whichever store
it is (``MEDIA_ROOT``, or a bucket): the count files of fan-out attempts that will never be
merged (their run finished, moved to a newer attempt, or is gone), the part totals of
evaluations no merge will read, corpus files that no row holds (the database failed between the
move and the INSERT), the ``.part`` objects of uploads, imports and writes whose process was
killed, downloads whose record was never written (a render stopped between its objects and
its ``.sha256``), and the writes the store itself holds unfinished (a bucket's multipart uploads
begun and never completed or aborted: no object until then, nothing after). Beat runs it every
``SWEEP_EVERY_SECONDS``; an object is left alone until it is ``SWEEP_MIN_AGE_SECONDS`` old, so
work in progress is never touched."""

from __future__ import annotations

import time
from collections.abc import Iterable

from django.conf import settings

from ..models import Corpus, Evaluation, TrainingRun
from ..storage import Entry, Store, get_store
from .downloads import Download


def sweep_leftovers(*, min_age_seconds: int | None = None) -> dict[str, list[str]]:
    """Remove what dead work left, once older than ``min_age_seconds``; returns what went, by
    kind of leftover, as store names (``runs/12/attempt-1``, ``corpora/incoming/x.part``)."""
    if min_age_seconds is None:
        min_age_seconds = settings.SWEEP_MIN_AGE_SECONDS
    cutoff = time.time() - min_age_seconds
    store = get_store()
    removed: dict[str, list[str]] = {"count parts": [], "corpus files": [], "part files": [],
                                     "unfinished uploads": store.abort_unfinished(cutoff),
                                     "downloads without a record": []}
    entries = list(store.list(""))
    removed["count parts"] = _sweep_folders(store, _dead_attempts(entries), cutoff)
    removed["evaluation parts"] = _sweep_folders(store, _dead_evaluations(entries), cutoff)
    gone = tuple(f"{folder}/" for folder in removed["count parts"] + removed["evaluation parts"])
    held = set(Corpus.objects.values_list("object_name", flat=True))
    recorded = _recorded_downloads(store, entries)
    for entry in entries:
        name = entry.name
        if entry.modified >= cutoff or name.startswith(gone):
            continue
        if name.endswith(".part"):
            store.delete(name)
            removed["part files"].append(name)
        elif name.startswith("corpora/") and name.count("/") == 1 and name.endswith(".txt") \
                and name not in held:
            store.delete(name)
            removed["corpus files"].append(name)
        elif name.startswith("exports/") and not name.endswith(".sha256") \
                and name not in recorded:
            store.delete(name)  # a render stopped before its record was written
            removed["downloads without a record"].append(name)
    return removed


def _folders(entries: Iterable[Entry], top: str, depth: int) -> dict[str, list[Entry]]:
    """The objects under ``top/``, by their folder ``depth`` names deep
    (``_folders(entries, "runs", 3)``: by ``runs/RUN/attempt-N``)."""
    folders: dict[str, list[Entry]] = {}
    for entry in entries:
        parts = entry.name.split("/")
        if len(parts) > depth and parts[0] == top:
            folders.setdefault("/".join(parts[:depth]), []).append(entry)
    return folders


def _dead_attempts(entries: list[Entry]) -> dict[str, list[Entry]]:
    """``runs/RUN/attempt-N`` folders whose counts no merge will read: the run is finished or
    gone, or counts another attempt now."""
    attempts = {folder: objects for folder, objects in _folders(entries, "runs", 3).items()
                if folder.split("/")[2].startswith("attempt-")}
    runs = {int(run) for run in (f.split("/")[1] for f in attempts) if run.isdigit()}
    live = dict(TrainingRun.objects.filter(pk__in=runs).exclude(status__in=TrainingRun.FINISHED)
                .values_list("pk", "attempt"))
    dead = {}
    for folder, objects in attempts.items():
        _, run, attempt = folder.split("/")
        number = attempt.removeprefix("attempt-")
        if not (run.isdigit() and number.isdigit() and live.get(int(run)) == int(number)):
            dead[folder] = objects
    return dead


def _dead_evaluations(entries: list[Entry]) -> dict[str, list[Entry]]:
    """``evaluations/EVALUATION`` folders of part totals no merge will read (the evaluation
    finished or is gone; the merge removes them itself unless it was killed)."""
    live = set(Evaluation.objects.filter(status__in=[Evaluation.Status.QUEUED,
                                                     Evaluation.Status.RUNNING])
               .values_list("pk", flat=True))
    return {folder: objects for folder, objects in _folders(entries, "evaluations", 2).items()
            if not (folder.split("/")[1].isdigit() and int(folder.split("/")[1]) in live)}


def _sweep_folders(store: Store, folders: dict[str, list[Entry]], cutoff: float) -> list[str]:
    """Remove each folder whose newest object is older than ``cutoff``; the folders removed."""
    removed = []
    for folder, objects in sorted(folders.items()):
        if max(o.modified for o in objects) < cutoff:
            store.delete_prefix(f"{folder}/")
            removed.append(folder)
    return removed


def _recorded_downloads(store: Store, entries: list[Entry]) -> set[str]:
    """The download objects (and their gzip twins) that a ``.sha256`` record names."""
    named = set()
    for entry in entries:
        if entry.name.startswith("exports/") and entry.name.endswith(".sha256"):
            try:
                artifact = Download.from_record(store.read_bytes(entry.name))
            except (FileNotFoundError, ValueError, UnicodeDecodeError):
                continue
            named.update((artifact.name, artifact.gzip_name))
    return named
