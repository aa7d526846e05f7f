"""The periodic sweep of what dead work left in the store (``MEDIA_ROOT``, or the bucket): the
count files of fan-out attempts that will never be merged (their run finished, moved to a newer
attempt, or is gone), corpus files that no row holds (the database failed between the move and
the INSERT), the ``.part`` files of uploads, imports and writes whose process was killed, and
the ``.part`` staging folders of downloads whose render was (under ``exports/``). Beat runs it
every ``SWEEP_EVERY_SECONDS``; a file is left alone until it is ``SWEEP_MIN_AGE_SECONDS`` old,
so work in progress is never touched. In a bucket the same objects go (by the names they would
have as files), and so do multipart uploads begun that long ago and never completed or aborted
(a killed upload: no object until then, nothing after) and downloads without their record."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

from django.conf import settings

from ..models import Corpus, Evaluation, TrainingRun
from ..storage import get_store


def sweep_leftovers(*, min_age_seconds: int | None = None) -> dict[str, list[str]]:
    """Remove dead attempts' count folders and stale ``.part`` files and folders; returns what
    went, as paths relative to ``MEDIA_ROOT``."""
    if min_age_seconds is None:
        min_age_seconds = settings.SWEEP_MIN_AGE_SECONDS
    cutoff = time.time() - min_age_seconds
    if get_store().kind != "local":
        return _sweep_store(get_store(), cutoff)
    media = Path(settings.MEDIA_ROOT)
    removed: dict[str, list[str]] = {"count parts": [], "corpus files": [], "part files": []}
    for folder in _dead_attempt_folders(media / "runs"):
        if folder.stat().st_mtime < cutoff:
            shutil.rmtree(folder, ignore_errors=True)
            removed["count parts"].append(str(folder.relative_to(media)))
            _remove_if_empty(folder.parent)
    removed["evaluation parts"] = []
    for folder in _dead_evaluation_folders(media / "evaluations"):
        if max((f.stat().st_mtime for f in folder.rglob("*")), default=0) < cutoff:
            shutil.rmtree(folder, ignore_errors=True)
            removed["evaluation parts"].append(str(folder.relative_to(media)))
    for orphan in _corpus_files_without_a_row(media):
        if orphan.stat().st_mtime < cutoff:
            orphan.unlink(missing_ok=True)
            removed["corpus files"].append(str(orphan.relative_to(media)))
    for part in sorted(media.rglob("*.part")) if media.is_dir() else ():  # folders first
        try:
            if part.stat().st_mtime < cutoff:
                shutil.rmtree(part) if part.is_dir() else part.unlink()
                removed["part files"].append(str(part.relative_to(media)))
        except FileNotFoundError:  # finished (moved into place) meanwhile, or its folder went
            continue
    return removed


def _dead_attempt_folders(runs: Path):
    """``runs/RUN/attempt-N`` folders whose counts no merge will read."""
    if not runs.is_dir():
        return
    folders = [(f, r) for r in runs.iterdir() if r.is_dir() and r.name.isdigit()
               for f in r.iterdir() if f.is_dir() and f.name.startswith("attempt-")]
    live = dict(TrainingRun.objects.filter(pk__in={int(r.name) for _, r in folders})
                .exclude(status__in=TrainingRun.FINISHED).values_list("pk", "attempt"))
    for folder, run in folders:
        attempt = folder.name.removeprefix("attempt-")
        if live.get(int(run.name)) != (int(attempt) if attempt.isdigit() else None):
            yield folder


def _evaluations_in_parts() -> set[int]:
    """Evaluations whose parts a merge may still read (queued or running)."""
    return set(Evaluation.objects.filter(status__in=[Evaluation.Status.QUEUED,
                                                     Evaluation.Status.RUNNING])
               .values_list("pk", flat=True))


def _dead_evaluation_folders(folder: Path):
    """``evaluations/EVALUATION`` folders of part totals no merge will read (the evaluation
    finished or is gone; the merge removes them itself unless it was killed)."""
    if not folder.is_dir():
        return
    live = _evaluations_in_parts()
    for found in sorted(folder.iterdir()):
        if found.is_dir() and not (found.name.isdigit() and int(found.name) in live):
            yield found


def _corpus_files_without_a_row(media: Path) -> list[Path]:
    """Stored corpus files that no ``Corpus`` row holds (a crash between the move and the
    INSERT)."""
    folder = media / "corpora"
    files = [p for p in folder.glob("*.txt") if p.is_file()] if folder.is_dir() else []
    if not files:
        return []
    held = set(Corpus.objects.values_list("file", flat=True))
    return [p for p in files if f"corpora/{p.name}" not in held]


def _remove_if_empty(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:
        pass


def _sweep_store(store, cutoff: float) -> dict[str, list[str]]:
    """The same sweep over the objects of a bucket, and its unfinished multipart uploads."""
    removed: dict[str, list[str]] = {"count parts": [], "corpus files": [], "part files": [],
                                     "unfinished uploads": store.abort_unfinished(cutoff),
                                     "downloads without a record": []}
    entries = list(store.list(""))
    recorded = _recorded_downloads(store, entries)
    attempts: dict[str, list] = {}
    for entry in entries:
        parts = entry.name.split("/")
        if len(parts) >= 4 and parts[0] == "runs" and parts[2].startswith("attempt-"):
            attempts.setdefault("/".join(parts[:3]), []).append(entry)
    live = dict(TrainingRun.objects.filter(pk__in={int(f.split("/")[1]) for f in attempts
                                                   if f.split("/")[1].isdigit()})
                .exclude(status__in=TrainingRun.FINISHED).values_list("pk", "attempt"))
    for folder, objects in sorted(attempts.items()):
        _, run, attempt = folder.split("/")
        number = attempt.removeprefix("attempt-")
        alive = run.isdigit() and live.get(int(run)) == (int(number) if number.isdigit() else 0)
        if not alive and max(o.modified for o in objects) < cutoff:
            for entry in objects:
                store.delete(entry.name)
            removed["count parts"].append(folder)
    removed["evaluation parts"] = []
    live_evaluations = _evaluations_in_parts()
    evaluations: dict[str, list] = {}
    for entry in entries:
        parts = entry.name.split("/")
        if len(parts) >= 3 and parts[0] == "evaluations":
            evaluations.setdefault("/".join(parts[:2]), []).append(entry)
    for folder, objects in sorted(evaluations.items()):
        number = folder.split("/")[1]
        alive = number.isdigit() and int(number) in live_evaluations
        if not alive and max(o.modified for o in objects) < cutoff:
            for entry in objects:
                store.delete(entry.name)
            removed["evaluation parts"].append(folder)
    held = set(Corpus.objects.values_list("file", flat=True))
    for entry in entries:
        name = entry.name
        if entry.modified >= cutoff:
            continue
        if name.endswith(".part"):
            store.delete(name)
            removed["part files"].append(name)
        elif name.startswith("corpora/") and name.count("/") == 1 and name.endswith(".txt") \
                and name not in held:
            store.delete(name)
            removed["corpus files"].append(name)
        elif "/download/" in name and name.startswith("exports/") \
                and not name.endswith(".sha256") and name not in recorded:
            store.delete(name)  # a render stopped before its record was written
            removed["downloads without a record"].append(name)
    return removed


def _recorded_downloads(store, entries) -> set[str]:
    """The download objects (and their gzip twins) that a ``.sha256`` record names."""
    from .downloads import Download

    named = set()
    for entry in entries:
        if entry.name.startswith("exports/") and entry.name.endswith(".sha256"):
            try:
                artifact = Download.from_record(store.read_bytes(entry.name))
            except (FileNotFoundError, ValueError, UnicodeDecodeError):
                continue
            named.update((artifact.name, artifact.gzip_name))
    return named
