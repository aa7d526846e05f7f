"""Workflows that span the models, the BPE core and the queue.

Each is a keyword-only function named verb-first. Bad input raises ``ValueError`` with a message
a person can act on, before any row is written; a staff-only action by anyone else raises
``PermissionDenied``. Tasks call the ``execute_*``/``count_*``/``merge_*``/``run_*`` functions
with ids; everything else is called by commands, the admin, the API and the dashboard.
"""

from __future__ import annotations

import codecs
import hashlib
import json
import logging
import os
import shutil
import tempfile
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import regex
from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.db.models import Case, F, Max, Q, Value, When
from django.utils import timezone

from . import tasks
from .bpe import Tokenizer as CoreTokenizer
from .bpe import TrainingCancelled, TrainResult, train_bpe
from .bpe.counting import add_counts, count_chunk, plan_ranges
from .bpe.formats import check_format, dumps_tokenizer, loads_tokenizer
from .bpe.metrics import evaluate
from .bpe.pretokenize import PreTokenizer, check_special_tokens, iter_chunks
from .bpe.training import Ticker, build_vocab, learn_merges
from .models import (
    Alias,
    AliasMove,
    Corpus,
    CountPart,
    Evaluation,
    Tokenizer,
    TokenizerVersion,
    TrainingRun,
    check_name,
    content_digest,
)

log = logging.getLogger(__name__)

Status = TrainingRun.Status


# -- corpora --------------------------------------------------------------------------------------

READ_BYTES = 1 << 20
SCRIPT_SAMPLE_BYTES = 16 << 20  # the script summary looks at the first 16 MB
SCRIPTS = ("Latin", "Cyrillic", "Greek", "Arabic", "Hebrew", "Devanagari", "Thai", "Han",
           "Hiragana", "Katakana", "Hangul")
_SCRIPT_RES = [(name, regex.compile(rf"\p{{Script={name}}}+")) for name in SCRIPTS]
_LETTERS = regex.compile(r"\p{L}+")


@dataclass
class StagedCorpus:
    """A validated upload in a temporary file, with what was learned while streaming it."""

    path: Path
    sha256: str
    size_bytes: int
    line_count: int
    char_count: int
    scripts: dict


def import_corpus(*, stream, name: str, original_filename: str = "", uploaded_by=None,
                  is_evaluation: bool = False) -> Corpus:
    """Store a corpus read from a binary stream. The same bytes give back the existing corpus.

    The bytes are streamed to a temporary file, hashed and UTF-8-validated on the way; the row is
    created only at the end, so bad input (not UTF-8, empty, over ``CORPUS_MAX_BYTES``) leaves
    nothing behind.
    """
    check_name("corpus", name)
    staged = stage_corpus(stream)
    try:
        return _register_corpus(staged, name=name, original_filename=original_filename,
                                uploaded_by=uploaded_by, is_evaluation=is_evaluation)
    finally:
        staged.path.unlink(missing_ok=True)


def stage_corpus(stream) -> StagedCorpus:
    """Copy a binary stream to a temporary file under ``MEDIA_ROOT``, validating as it goes."""
    incoming = Path(settings.MEDIA_ROOT) / "corpora" / "incoming"
    incoming.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(dir=incoming, suffix=".part")
    try:
        with os.fdopen(handle, "wb") as out:
            stats = _copy_validated(stream, out)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
    return StagedCorpus(Path(name), **stats)


def _copy_validated(stream, out) -> dict:
    cap = settings.CORPUS_MAX_BYTES
    decoder = codecs.getincrementaldecoder("utf-8")()
    digest, tally, size = hashlib.sha256(), TextTally(), 0
    while data := stream.read(READ_BYTES):
        if not isinstance(data, bytes):
            raise ValueError("the corpus stream must be binary: open the file with mode 'rb'")
        if size + len(data) > cap:
            raise ValueError(f"the corpus is larger than the limit of {cap} bytes (setting "
                             f"CORPUS_MAX_BYTES): split it, or raise the limit")
        tally.add(_decode(decoder, data, size))
        digest.update(data)
        out.write(data)
        size += len(data)
    _decode(decoder, b"", size, final=True)
    if size == 0:
        raise ValueError("the corpus is empty: the file holds no bytes")
    return {"sha256": digest.hexdigest(), "size_bytes": size, **tally.summary()}


def _decode(decoder, data: bytes, offset: int, final: bool = False) -> str:
    """Decode the next bytes of a stream; an invalid byte raises ValueError naming its offset."""
    pending = len(decoder.getstate()[0])
    try:
        return decoder.decode(data, final=final)
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"the corpus is not valid UTF-8: byte 0x{exc.object[exc.start]:02x} at byte offset "
            f"{offset - pending + exc.start}; convert the file to UTF-8 and import it again"
        ) from None


class TextTally:
    """Lines, characters and letters per Unicode script of a text seen block by block."""

    def __init__(self):
        self.lines = self.chars = 0
        self.last = ""
        self.letters: Counter[str] = Counter()

    def add(self, text: str) -> None:
        if not text:
            return
        self.lines += text.count("\n")
        self.chars += len(text)
        self.last = text[-1]
        if self.chars <= SCRIPT_SAMPLE_BYTES:
            self.letters["all"] += sum(map(len, _LETTERS.findall(text)))
            for script, pattern in _SCRIPT_RES:
                self.letters[script] += sum(map(len, pattern.findall(text)))

    def summary(self) -> dict:
        """``{"line_count": .., "char_count": .., "scripts": {"Latin": 0.97, "other": 0.03}}``"""
        total = self.letters.pop("all", 0)
        scripts = {s: round(n / total, 4) for s, n in self.letters.most_common() if n}
        other = total - sum(self.letters.values())
        if total and other:
            scripts["other"] = round(other / total, 4)
        lines = self.lines + (self.last not in ("", "\n"))
        return {"line_count": lines, "char_count": self.chars, "scripts": scripts}


def _register_corpus(staged: StagedCorpus, *, name, original_filename, uploaded_by,
                     is_evaluation) -> Corpus:
    existing = Corpus.objects.filter(sha256=staged.sha256).first()
    if existing is None:
        if Corpus.objects.filter(name=name).exists():
            raise ValueError(f"a corpus named {name!r} already exists with other content: "
                             f"choose another name")
        stored = f"corpora/{staged.sha256}.txt"  # server-generated, content-addressed
        target = Path(settings.MEDIA_ROOT) / stored
        os.replace(staged.path, target)
        try:
            with transaction.atomic():
                return Corpus.objects.create(
                    name=name, original_filename=original_filename[:255], file=stored,
                    sha256=staged.sha256, size_bytes=staged.size_bytes,
                    line_count=staged.line_count, char_count=staged.char_count,
                    scripts=staged.scripts, is_evaluation=is_evaluation, uploaded_by=uploaded_by)
        except IntegrityError:  # a concurrent import of the same bytes, or of the same name
            existing = Corpus.objects.filter(sha256=staged.sha256).first()
            if existing is None:
                target.unlink(missing_ok=True)  # no row holds these bytes: no file either
                raise ValueError(f"a corpus named {name!r} already exists: choose another name")
        except BaseException:
            if not Corpus.objects.filter(sha256=staged.sha256).exists():
                target.unlink(missing_ok=True)
            raise
    if is_evaluation and not existing.is_evaluation:
        Corpus.objects.filter(pk=existing.pk).update(is_evaluation=True)
        existing.is_evaluation = True
    return existing


# -- starting and cancelling training runs --------------------------------------------------------

def start_training_run(*, corpora, tokenizer_name: str, vocab_size: int, special_tokens=(),
                       pattern: str = "gpt2", min_frequency: int = 1, sweep=(),
                       created_by=None) -> TrainingRun:
    """Validate the parameters, commit the run row, and enqueue its task once committed.

    ``corpora``: Corpus objects or corpus names. ``sweep``: smaller vocab sizes to register as
    versions too, from the merge prefixes of the same run.
    """
    params = check_training_parameters(tokenizer_name=tokenizer_name, vocab_size=vocab_size,
                                       special_tokens=special_tokens, pattern=pattern,
                                       min_frequency=min_frequency, sweep=sweep)
    corpora = resolve_corpora(corpora)
    with transaction.atomic():
        tokenizer, _ = Tokenizer.objects.get_or_create(name=params.pop("tokenizer_name"))
        run = TrainingRun.objects.create(tokenizer=tokenizer, created_by=created_by,
                                         heartbeat_at=timezone.now(), **params)
        run.corpora.set(corpora)
        tasks.execute_training_run.delay_on_commit(run.pk)
    return run


def check_training_parameters(*, tokenizer_name, vocab_size, special_tokens, pattern,
                              min_frequency, sweep) -> dict:
    """The run's fields from validated parameters; anything out of bounds raises ValueError."""
    check_name("tokenizer", tokenizer_name)
    special_tokens = check_special_tokens(special_tokens)
    low, high = 256 + len(special_tokens), settings.MAX_VOCAB_SIZE
    if not _is_int(vocab_size) or not low <= vocab_size <= high:
        raise ValueError(f"vocab size {vocab_size!r} is out of bounds: it must be an integer from "
                         f"{low} (256 bytes + {len(special_tokens)} special tokens) to {high} "
                         f"(setting MAX_VOCAB_SIZE)")
    if not _is_int(min_frequency) or min_frequency < 1:
        raise ValueError(f"min frequency must be an integer >= 1, got {min_frequency!r}")
    sizes = sorted(set(sweep or ()))
    for size in sizes:
        if not _is_int(size) or not low <= size < vocab_size:
            raise ValueError(f"sweep vocab size {size!r} must be an integer from {low} to "
                             f"{vocab_size - 1} (below the run's vocab size)")
    return {"tokenizer_name": tokenizer_name, "vocab_size": vocab_size,
            "special_tokens": special_tokens, "pattern": PreTokenizer(pattern).pattern,
            "min_frequency": min_frequency, "options": {"sweep": sizes} if sizes else {}}


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def resolve_corpora(corpora) -> list[Corpus]:
    """Corpus objects for a list of corpora or corpus names (an unknown name is a ValueError)."""
    corpora = list(corpora or [])
    if not corpora:
        raise ValueError("choose at least one corpus to train on")
    names = [c.name if isinstance(c, Corpus) else c for c in corpora]
    return Corpus.objects.by_names(names)


def cancel_training_run(*, run: TrainingRun) -> TrainingRun:
    """Cancel a run: a queued run at once; a running one within a second (its worker stops)."""
    queued = Q(status=Status.QUEUED)
    # one UPDATE, so that a run the reaper moves between queued and running is never missed
    TrainingRun.objects.filter(pk=run.pk, status__in=[Status.QUEUED, Status.RUNNING]).update(
        cancel_requested=True,
        status=Case(When(queued, then=Value(Status.CANCELLED)), default=F("status")),
        finished_at=Case(When(queued, then=Value(timezone.now())), default=F("finished_at")))
    run.refresh_from_db()
    return run


# -- executing a run ------------------------------------------------------------------------------

class LostRun(Exception):
    """This attempt no longer owns its run (the reaper gave it to another attempt)."""


class RunReporter:
    """Writes one attempt's stage, progress, merges/s and heartbeat to its run row (at most every
    ``WRITE_SECONDS``) and notices a cancel request on the same write.

    ``progress`` and ``should_stop`` are the core's callbacks (called up to ~5 times a second).
    With ``track_progress=False`` (a count task of a fanned-out run) only the heartbeat is
    written.
    """

    WRITE_SECONDS = 0.4

    def __init__(self, run: TrainingRun, seconds: dict | None = None,
                 track_progress: bool = True):
        self.run, self.attempt, self.track_progress = run, run.attempt, track_progress
        self.seconds = dict(seconds or {})
        self.stage, self.stage_start = "", time.monotonic()
        self.last_write, self.cancelled = float("-inf"), False

    def progress(self, stage: str, done: int, total: int) -> None:
        now = time.monotonic()
        if stage != self.stage:
            self.seconds[self.stage] = self.seconds.get(self.stage, 0) + now - self.stage_start
            self.stage, self.stage_start, self.last_write = stage, now, float("-inf")
        if now - self.last_write < self.WRITE_SECONDS:
            return
        self.last_write = now
        if not self.track_progress:
            return self.write()
        rate = done / (now - self.stage_start) if stage == "merge" and now > self.stage_start \
            else None
        self.write(stage=stage, progress_done=done, progress_total=total,
                   merges_per_second=rate, stage_seconds=self.stage_seconds())

    def should_stop(self) -> bool:
        return self.cancelled

    def stage_seconds(self) -> dict:
        seconds = dict(self.seconds)
        seconds[self.stage] = seconds.get(self.stage, 0) + time.monotonic() - self.stage_start
        return {stage: round(s, 3) for stage, s in seconds.items() if stage}

    def write(self, **fields) -> None:
        """Update the row while this attempt owns it and no cancel is pending."""
        owned = self.run.owned(self.attempt)
        if owned.filter(cancel_requested=False).update(heartbeat_at=timezone.now(), **fields):
            return
        if not owned.exists():
            raise LostRun(f"run {self.run.pk} attempt {self.attempt} was taken over")
        self.cancelled = True


def execute_training_run(*, run_id: int) -> None:
    """Run a queued training run in this worker: count the corpora (or fan the counting out to
    count tasks), merge, and save the versions. A duplicate delivery does nothing."""
    run = _claim_run(run_id)
    if run is None:
        return
    reporter = RunReporter(run)
    with recording_outcome(run):
        if run.progress_total > settings.FANOUT_MIN_BYTES:  # the corpora's bytes, see _claim_run
            return fan_out_counting(run=run)
        result = train_bpe(_corpus_paths(run), run.vocab_size, run.special_tokens, run.pattern,
                           run.min_frequency, progress=reporter.progress,
                           should_stop=reporter.should_stop)
        save_training_result(run=run, reporter=reporter, result=result)


def _claim_run(run_id: int) -> TrainingRun | None:
    """Move a queued run to running as the next attempt; None when it is not queued (finished,
    cancelled, or already taken by another delivery of the same task)."""
    now = timezone.now()
    run = TrainingRun.objects.filter(pk=run_id).first()
    if run is None:
        return None
    total = sum(run.corpora.values_list("size_bytes", flat=True))
    claimed = TrainingRun.objects.filter(pk=run_id, status=Status.QUEUED).update(
        status=Status.RUNNING, attempt=F("attempt") + 1, heartbeat_at=now, started_at=now,
        stage="count", progress_done=0, progress_total=total, merges_per_second=None,
        stage_seconds={}, error="", fanout_parts=0)
    if not claimed:
        log.info("run %s is not queued: nothing to do", run_id)
        return None
    return TrainingRun.objects.select_related("tokenizer").get(pk=run_id)


def _corpus_paths(run: TrainingRun) -> list[Path]:
    return [corpus.path for corpus in run.corpora.order_by("name")]


@contextmanager
def recording_outcome(run: TrainingRun):
    """Record how an attempt ended: cancelled, or failed with a message a person can act on.
    An attempt that lost its run to another attempt records nothing."""
    try:
        yield
    except TrainingCancelled:
        _finish_run(run, Status.CANCELLED)
    except LostRun as exc:
        log.warning("%s", exc)
    except ValueError as exc:
        _finish_run(run, Status.FAILED, error=str(exc))
    except Exception as exc:
        log.exception("run %s failed", run.pk)
        _finish_run(run, Status.FAILED, error=f"unexpected error in the worker: "
                    f"{type(exc).__name__}: {exc} (the worker log has the details)")


def _finish_run(run: TrainingRun, status: str, error: str = "", **fields) -> None:
    now = timezone.now()
    run.owned(run.attempt).update(status=status, error=error, finished_at=now, heartbeat_at=now,
                                  **fields)


def save_training_result(*, run: TrainingRun, reporter: RunReporter, result: TrainResult) -> None:
    """Save the run's versions (the full vocab size, and each sweep size) and mark it succeeded,
    in one transaction; a cancel that arrived meanwhile wins and nothing is saved."""
    reporter.progress("save", 0, 1)
    full = result.tokenizer()
    cores = [prefix_tokenizer(full, size) for size in run.sweep] + [full]
    digests = [content_digest(core) for core in cores]
    with transaction.atomic():
        locked = run.owned(run.attempt).select_for_update().first()
        if locked is None:
            raise LostRun(f"run {run.pk} attempt {run.attempt} was taken over before saving")
        if locked.cancel_requested:
            raise TrainingCancelled("cancelled before the version was saved")
        versions = [add_version(tokenizer=run.tokenizer, core=core, digest=digest,
                                source=TokenizerVersion.Source.TRAINING, training_run=run,
                                created_by=run.created_by)
                    for core, digest in zip(cores, digests)]
        run.versions.add(*versions)
        _finish_run(run, Status.SUCCEEDED, stage_seconds=reporter.stage_seconds())


def prefix_tokenizer(tokenizer: CoreTokenizer, vocab_size: int) -> CoreTokenizer:
    """The tokenizer of the first ``vocab_size - 256 - k`` merges of a trained tokenizer (ids:
    special tokens, bytes, merges), which is what training to that vocab size gives."""
    specials = tokenizer.special_tokens
    merges = tokenizer.merges[:vocab_size - 256 - len(specials)]
    if build_vocab(tokenizer.merges, specials) != tokenizer.vocab:
        raise ValueError("a sweep needs a trained tokenizer (ids: special tokens, bytes, merges)")
    counts = tokenizer.merge_counts[:len(merges)] if tokenizer.merge_counts else None
    return CoreTokenizer(build_vocab(merges, specials), merges, specials, tokenizer.pattern,
                         merge_counts=counts)


# -- versions -------------------------------------------------------------------------------------

def add_version(*, tokenizer: Tokenizer, core: CoreTokenizer, source: str, digest: str = "",
                source_detail: str = "", training_run=None, created_by=None) -> TokenizerVersion:
    """The version of ``tokenizer`` holding ``core``: the existing one with the same digest, or a
    new one numbered next, with all its rows. Call it inside a transaction."""
    digest = digest or content_digest(core)
    Tokenizer.objects.select_for_update().filter(pk=tokenizer.pk).first()  # one numberer at a time
    existing = TokenizerVersion.objects.filter(tokenizer=tokenizer, digest=digest).first()
    if existing is not None:
        return existing
    latest = tokenizer.versions.aggregate(latest=Max("number"))["latest"] or 0
    version = TokenizerVersion.objects.create(
        tokenizer=tokenizer, number=latest + 1, algorithm=core.algorithm, pattern=core.pattern,
        special_tokens=core.special_tokens, vocab_size=len(core.vocab),
        merge_count=len(core.merges), digest=digest, source=source,
        source_detail=source_detail[:255], training_run=training_run, created_by=created_by)
    version.write_contents(core)
    TokenizerVersion.objects.filter(pk=version.pk).update(status=TokenizerVersion.Status.READY)
    version.status = TokenizerVersion.Status.READY
    for corpus in Corpus.objects.for_evaluation():
        queue_evaluation(version=version, corpus=corpus)
    return version


def register_sweep(*, version: TokenizerVersion, vocab_sizes, created_by=None
                   ) -> list[TokenizerVersion]:
    """Register versions for smaller vocab sizes from the merge prefixes of a trained version."""
    sizes = sorted(set(vocab_sizes))
    low = 256 + len(version.special_tokens)
    for size in sizes:
        if not _is_int(size) or not low <= size < version.vocab_size:
            raise ValueError(f"sweep vocab size {size!r} must be an integer from {low} to "
                             f"{version.vocab_size - 1}")
    full = version.load_tokenizer()
    cores = [prefix_tokenizer(full, size) for size in sizes]
    with transaction.atomic():
        return [add_version(tokenizer=version.tokenizer, core=core, source=version.source,
                            source_detail=f"first {len(core.merges)} merges of {version.label}",
                            training_run=version.training_run, created_by=created_by)
                for core in cores]


def import_tokenizer(*, files: dict[str, bytes], tokenizer_name: str, format: str | None = None,
                     source_detail: str = "", created_by=None) -> TokenizerVersion:
    """A version from tokenizer files in any format the core reads (detected when not given);
    the same content as an existing version of the tokenizer gives that version back."""
    check_name("tokenizer", tokenizer_name)
    core = loads_tokenizer(files, format)
    if core.algorithm != "byte_bpe":
        raise ValueError(f"the registry keeps byte-level BPE tokenizers; these files hold a "
                         f"{core.algorithm} tokenizer")
    detail = source_detail or f"imported from {', '.join(sorted(files))}"
    with transaction.atomic():
        tokenizer, _ = Tokenizer.objects.get_or_create(name=tokenizer_name)
        return add_version(tokenizer=tokenizer, core=core, source=TokenizerVersion.Source.IMPORT,
                           source_detail=detail, created_by=created_by)


def _require_staff(user, action: str) -> None:
    if user is None or not user.is_active or not user.is_staff:
        raise PermissionDenied(f"only staff can {action}")


def set_version_lifecycle(*, version: TokenizerVersion, lifecycle: str, user
                          ) -> TokenizerVersion:
    """Publish or deprecate a version (or return it to draft): staff only."""
    _require_staff(user, f"mark versions {lifecycle}")
    if lifecycle not in TokenizerVersion.Lifecycle.values:
        raise ValueError(f"lifecycle must be one of {', '.join(TokenizerVersion.Lifecycle.values)}"
                         f", got {lifecycle!r}")
    version.lifecycle = lifecycle
    version.save(update_fields=["lifecycle"])
    return version


def publish_version(*, version: TokenizerVersion, user) -> TokenizerVersion:
    return set_version_lifecycle(version=version, lifecycle="published", user=user)


def deprecate_version(*, version: TokenizerVersion, user) -> TokenizerVersion:
    return set_version_lifecycle(version=version, lifecycle="deprecated", user=user)


def annotate_version(*, version: TokenizerVersion, notes: str, user) -> TokenizerVersion:
    _require_staff(user, "annotate versions")
    version.notes = notes
    version.save(update_fields=["notes"])
    return version


_ALIAS = regex.compile(r"[a-z][a-z0-9_-]{0,49}")


def check_alias_name(name) -> str:
    """``check_alias_name("production") -> "production"``; names that could be read as a version
    number, or hold other characters, raise ValueError."""
    if not isinstance(name, str) or not _ALIAS.fullmatch(name):
        raise ValueError(f"alias {name!r} is not valid: use 1-50 lowercase letters, digits, '_' or "
                         f"'-', starting with a letter")
    return name


def move_alias(*, version: TokenizerVersion, name: str, user) -> Alias:
    """Point the alias ``name`` of the version's tokenizer at ``version`` (creating it), and
    record the move: staff only."""
    _require_staff(user, "move aliases")
    check_alias_name(name)
    if version.status != TokenizerVersion.Status.READY:
        raise ValueError(f"version {version.label} is not ready")
    with transaction.atomic():
        alias = Alias.objects.select_for_update().filter(tokenizer=version.tokenizer_id,
                                                         name=name).first()
        previous = alias.version if alias else None
        if previous == version:
            return alias
        if alias is None:
            alias = Alias(tokenizer=version.tokenizer, name=name)
        alias.version, alias.moved_by, alias.moved_at = version, user, timezone.now()
        alias.save()
        AliasMove.objects.create(alias=alias, from_version=previous, to_version=version,
                                 moved_by=user, moved_at=alias.moved_at)
    return alias


def render_tokenizer_files(*, version: TokenizerVersion, format: str) -> dict[str, bytes]:
    """The files of a version in ``format``, cached under ``MEDIA_ROOT/exports`` by digest."""
    check_format(format)
    name = version.tokenizer.name
    folder = Path(settings.MEDIA_ROOT) / "exports" / version.digest / format / name
    if folder.is_dir():
        return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}
    files = dumps_tokenizer(version.load_tokenizer(), format, name)
    staging = Path(tempfile.mkdtemp(dir=_ensure(folder.parent)))
    for file_name, data in files.items():
        (staging / file_name).write_bytes(data)
    try:
        staging.rename(folder)
    except OSError:  # another process cached it first
        pass
    return files


def _ensure(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return folder


# -- fan-out counting -----------------------------------------------------------------------------
# A Celery chord needs a result backend, and job state lives in the database instead: each count
# task marks its CountPart done, and the one that finishes the last part (decided under a lock on
# the run row) enqueues the merge task.

def fan_out_counting(*, run: TrainingRun) -> None:
    """Split the run's corpora into byte ranges at safe cuts and enqueue one count task each."""
    ranges = [(corpus, start, end) for corpus in run.corpora.order_by("name")
              for start, end in plan_ranges(corpus.path, run.pattern, run.special_tokens,
                                            settings.FANOUT_PART_BYTES)]
    with transaction.atomic():
        if run.owned(run.attempt).select_for_update().first() is None:
            raise LostRun(f"run {run.pk} attempt {run.attempt} was taken over")
        parts = CountPart.objects.bulk_create(
            CountPart(run=run, attempt=run.attempt, index=index, corpus=corpus, start=start,
                      end=end) for index, (corpus, start, end) in enumerate(ranges))
        run.owned(run.attempt).update(fanout_parts=len(parts), heartbeat_at=timezone.now())
        for part in parts:
            tasks.count_corpus_part.delay_on_commit(part.pk)


def count_corpus_part(*, part_id: int, worker: str = "") -> None:
    """Count one byte range of a fanned-out run and store the counts; the last part to finish
    enqueues the merge task. A duplicate delivery, or a part of an old attempt, does nothing."""
    part = CountPart.objects.select_related("run__tokenizer", "corpus").filter(pk=part_id).first()
    if part is None or part.done or part.run.attempt != part.attempt:
        return
    run = part.run
    if run.status != Status.RUNNING:
        return
    reporter = RunReporter(run, track_progress=False)
    with recording_outcome(run):
        counts = count_part_text(part, Ticker(reporter.progress, reporter.should_stop))
        path = _part_counts_path(part)
        _write_atomically(path, json.dumps(counts, ensure_ascii=False).encode())
        _complete_part(part, worker, path)


def count_part_text(part: CountPart, ticker: Ticker) -> Counter:
    """The pre-token counts (``str`` keys) of one part, ticking between chunks of text."""
    run = part.run
    with open(part.corpus.path, "rb") as handle:
        handle.seek(part.start)
        text = handle.read(part.size).decode("utf-8")  # validated on import; cut at characters
    pretokenizer = PreTokenizer(run.pattern)
    blocks = (text[i:i + (1 << 16)] for i in range(0, len(text), 1 << 16))
    counts: Counter[str] = Counter()
    done = 0
    for chunk in iter_chunks(blocks, run.special_tokens, pretokenizer.line_cuts, 1 << 18):
        add_counts(counts, count_chunk(chunk, pretokenizer, run.special_tokens))
        done += len(chunk)
        ticker("count", done, len(text))
    return counts


def _part_counts_path(part: CountPart) -> Path:
    return (Path(settings.MEDIA_ROOT) / "runs" / str(part.run_id) / f"attempt-{part.attempt}"
            / f"part-{part.index}.json")


def _write_atomically(path: Path, data: bytes) -> None:
    handle, staging = tempfile.mkstemp(dir=_ensure(path.parent), suffix=".part")
    with os.fdopen(handle, "wb") as out:
        out.write(data)
    os.replace(staging, path)


def _complete_part(part: CountPart, worker: str, path: Path) -> None:
    with transaction.atomic():
        if part.run.owned(part.attempt).select_for_update().first() is None:
            return  # the run was cancelled, failed, or re-queued meanwhile
        marked = CountPart.objects.filter(pk=part.pk, done=False).update(
            done=True, worker=worker[:200], counts_file=str(path.relative_to(settings.MEDIA_ROOT)))
        if not marked:
            return  # a duplicate delivery finished this part first
        TrainingRun.objects.filter(pk=part.run_id).update(
            progress_done=F("progress_done") + part.size, heartbeat_at=timezone.now())
        parts = CountPart.objects.filter(run=part.run_id, attempt=part.attempt)
        if not parts.filter(done=False).exists():
            tasks.merge_counted_run.delay_on_commit(part.run_id, part.attempt)


def merge_counted_run(*, run_id: int, attempt: int) -> None:
    """Sum the parts' counts of a fanned-out run, learn the merges and save the versions."""
    run = TrainingRun.objects.select_related("tokenizer").filter(pk=run_id).first()
    if run is None or run.attempt != attempt:
        return
    claimed = run.owned(attempt).filter(stage="count").update(stage="merge",
                                                               heartbeat_at=timezone.now())
    if not claimed:
        return  # a duplicate delivery
    elapsed = (timezone.now() - run.started_at).total_seconds()
    reporter = RunReporter(run, seconds={"count": elapsed})
    with recording_outcome(run):
        word_counts = merged_part_counts(run=run, attempt=attempt)
        if not word_counts:
            raise ValueError("the corpus is empty: it holds no text to train on")
        specials = run.special_tokens
        num_merges = run.vocab_size - 256 - len(specials)
        ticker = Ticker(reporter.progress, reporter.should_stop)
        merges, counts = learn_merges(word_counts, num_merges, run.min_frequency, ticker)
        result = TrainResult(build_vocab(merges, specials), merges, counts, specials, run.pattern)
        save_training_result(run=run, reporter=reporter, result=result)
    if not settings.FANOUT_KEEP_COUNTS:
        _remove_part_files(run_id, attempt)  # only this attempt's: a newer one may be counting


def merged_part_counts(*, run: TrainingRun, attempt: int) -> dict[bytes, int]:
    """The summed counts of every part of one attempt, as UTF-8 bytes -> count."""
    total: Counter[str] = Counter()
    for counts_file in CountPart.objects.filter(run=run, attempt=attempt).order_by("index") \
            .values_list("counts_file", flat=True):
        add_counts(total, json.loads((Path(settings.MEDIA_ROOT) / counts_file).read_bytes()))
    return {word.encode(): count for word, count in total.items()}


def _remove_part_files(run_id: int, attempt: int) -> None:
    folder = Path(settings.MEDIA_ROOT) / "runs" / str(run_id)
    shutil.rmtree(folder / f"attempt-{attempt}", ignore_errors=True)
    try:
        folder.rmdir()  # when no other attempt's files are left
    except OSError:
        pass


# -- the reaper -----------------------------------------------------------------------------------

def reap_runs(*, stale_seconds: int | None = None, max_attempts: int | None = None) -> dict:
    """Deal with runs whose worker went silent: a running run with a stale heartbeat is re-queued
    (or cancelled, when a cancel is pending, or failed after ``max_attempts``); a queued run whose
    task seems lost is sent again. Returns the run ids per outcome."""
    stale_seconds = settings.RUN_STALE_SECONDS if stale_seconds is None else stale_seconds
    max_attempts = settings.RUN_MAX_ATTEMPTS if max_attempts is None else max_attempts
    cutoff = timezone.now() - timedelta(seconds=stale_seconds)
    outcome: dict[str, list[int]] = {"requeued": [], "failed": [], "cancelled": [], "resent": []}
    for run in TrainingRun.objects.filter(status=Status.RUNNING, heartbeat_at__lt=cutoff):
        with transaction.atomic():
            stale = run.owned(run.attempt).filter(heartbeat_at__lt=cutoff).select_for_update()
            if stale.first() is not None:
                outcome[_reap(run, max_attempts)].append(run.pk)
    for run in TrainingRun.objects.filter(status=Status.QUEUED, heartbeat_at__lt=cutoff):
        if TrainingRun.objects.filter(pk=run.pk, status=Status.QUEUED).update(
                heartbeat_at=timezone.now()):
            tasks.execute_training_run.delay_on_commit(run.pk)
            outcome["resent"].append(run.pk)
    return outcome


def _reap(run: TrainingRun, max_attempts: int) -> str:
    if run.cancel_requested:
        _finish_run(run, Status.CANCELLED)
        return "cancelled"
    if run.attempt >= max_attempts:
        _finish_run(run, Status.FAILED, error=(
            f"the worker running this run stopped responding {run.attempt} times (last "
            f"heartbeat {run.heartbeat_at:%Y-%m-%d %H:%M:%S} UTC); it may have run out of memory "
            f"or been killed: check the worker logs, then start the run again"))
        return "failed"
    run.owned(run.attempt).update(status=Status.QUEUED, stage="", heartbeat_at=timezone.now())
    tasks.execute_training_run.delay_on_commit(run.pk)
    return "requeued"


# -- evaluations ----------------------------------------------------------------------------------

def queue_evaluation(*, version: TokenizerVersion, corpus: Corpus) -> Evaluation:
    """Queue (or re-queue, when it failed) the evaluation of a version on a corpus."""
    evaluation, created = Evaluation.objects.get_or_create(version=version, corpus=corpus)
    if created or evaluation.status == Evaluation.Status.FAILED:
        Evaluation.objects.filter(pk=evaluation.pk).update(status=Evaluation.Status.QUEUED,
                                                           error="")
        tasks.run_evaluation.delay_on_commit(evaluation.pk)
    return evaluation


def run_evaluation(*, evaluation_id: int) -> None:
    """Compute a queued evaluation (the task body); a duplicate delivery does nothing."""
    claimed = Evaluation.objects.filter(pk=evaluation_id, status=Evaluation.Status.QUEUED) \
        .update(status=Evaluation.Status.RUNNING, started_at=timezone.now())
    if claimed:
        _compute_evaluation(Evaluation.objects.select_related("version", "corpus")
                            .get(pk=evaluation_id))


def reap_evaluations(*, stale_seconds: int | None = None) -> list[int]:
    """Queue again the evaluations that have been running longer than ``stale_seconds`` (their
    worker died: evaluations keep no heartbeat). Returns their ids."""
    stale_seconds = settings.EVALUATION_STALE_SECONDS if stale_seconds is None else stale_seconds
    cutoff = timezone.now() - timedelta(seconds=stale_seconds)
    requeued = []
    for evaluation_id in Evaluation.objects.filter(status=Evaluation.Status.RUNNING,
                                                   started_at__lt=cutoff) \
            .values_list("pk", flat=True):
        if Evaluation.objects.filter(pk=evaluation_id, status=Evaluation.Status.RUNNING,
                                     started_at__lt=cutoff) \
                .update(status=Evaluation.Status.QUEUED):
            tasks.run_evaluation.delay_on_commit(evaluation_id)
            requeued.append(evaluation_id)
    return requeued


def evaluate_version(*, version: TokenizerVersion, corpus: Corpus) -> Evaluation:
    """Evaluate a version on a corpus now, in this process, and store the result."""
    evaluation, _ = Evaluation.objects.get_or_create(version=version, corpus=corpus)
    return _compute_evaluation(evaluation)


def _compute_evaluation(evaluation: Evaluation) -> Evaluation:
    try:
        tokenizer = evaluation.version.load_tokenizer()
        metrics = evaluate(tokenizer, corpus_lines(evaluation.corpus.path,
                                                   settings.EVALUATION_MAX_BYTES))
    except Exception as exc:  # stored on the row for the dashboard; the log has the traceback
        log.exception("evaluation %s failed", evaluation.pk)
        evaluation.status = Evaluation.Status.FAILED
        evaluation.error = f"{type(exc).__name__}: {exc}"
    else:
        evaluation.status, evaluation.metrics = Evaluation.Status.SUCCEEDED, metrics
        evaluation.error = ""
    evaluation.finished_at = timezone.now()
    evaluation.save()
    return evaluation


def corpus_lines(path: Path, max_bytes: int):
    """The lines of a corpus file, each with its newline, up to about ``max_bytes`` bytes."""
    seen = 0
    with open(path, encoding="utf-8", newline="") as handle:
        for line in handle:
            yield line
            seen += len(line.encode())
            if seen >= max_bytes:
                return
