"""``/api/runs``: start a run (every field checked before it is queued), follow it, cancel it."""

from typing import Literal

from django.shortcuts import get_object_or_404
from ninja import Router, Schema, Status

from ..bpe.parameters import SPLITS
from ..engines.registry import DEFAULT_KIND, trained_kind_choices
from ..models import TrainingRun
from ..services.queue import QueueUnavailable
from ..services.deletions import delete_run
from ..errors import Invalid
from ..services.extensions import start_extension_run
from ..services.runs import cancel_training_run, start_training_run
from ..shapes import RunOut
from .auth import READ, WRITE
from .body import Body
from .errors import ERRORS

router = Router(tags=["runs"])


class Unsent(Schema):
    detail: str
    run: RunOut


class WeightedCorpus(Body):
    """A corpus with a weight: its word/pre-token counts are multiplied by ``weight`` (a whole
    number from 1 to 100) before merging."""

    name: str
    weight: int = 1


TRAINED = Literal[tuple(name for name, _ in trained_kind_choices())]  # type: ignore[misc]


class RunIn(Body):
    """``algorithm``: a kind that trains: byte-level BPE (the default; ``pattern``, default
    gpt2) or character-level BPE (``lowercase``, default false; ``split``: whitespace, the
    default, or word_punct;
    ``min_word_frequency``, default 1; ``special_tokens`` default ``["<unk>"]`` and must hold
    it). A field of the other algorithm is a 400 naming it; a field no run takes, a 422.

    ``extends``: ``NAME@REF`` of a byte-level or character-level BPE version, or of a
    SentencePiece or tokenizer.json BPE model, to extend: the run continues its merges on
    ``corpora`` up to ``vocab_size`` tokens in all, and makes a new version of the same
    tokenizer in which every parent id keeps its token. The parent's
    pattern, split, options and special tokens are kept, so giving them is a 400;
    ``tokenizer`` may be left out.
    ``corpora``: names, or ``{"name": "de", "weight": 2}`` to count a corpus more (not in
    an extension run)."""

    tokenizer: str | None = None
    extends: str | None = None
    corpora: list[str | WeightedCorpus]
    vocab_size: int
    algorithm: TRAINED = DEFAULT_KIND
    special_tokens: list[str] | None = None  # byte-level: none; character-level: ["<unk>"]
    pattern: str | None = None  # byte-level BPE only (gpt2 when not given)
    lowercase: bool | None = None  # character-level BPE only, as the next two
    split: Literal[SPLITS] | None = None  # type: ignore[valid-type]
    min_word_frequency: int | None = None
    min_frequency: int = 1
    sweep: list[int] = []


@router.post("", response={201: RunOut, **ERRORS, 503: Unsent}, auth=WRITE)
def start_run(request, body: RunIn):
    """201 with the run; 503 when the run is saved but the task queue does not answer (it waits
    for the queue and is sent when it is back: follow it with ``GET /api/runs/{id}``)."""
    try:
        if body.extends is not None:
            run = _start_extension(request, body)
        else:
            run = start_training_run(corpora=_weighted(body.corpora),
                                     tokenizer_name=body.tokenizer or "",
                                     vocab_size=body.vocab_size,
                                     special_tokens=body.special_tokens,
                                     pattern=body.pattern,
                                     min_frequency=body.min_frequency, sweep=body.sweep,
                                     algorithm=body.algorithm, lowercase=body.lowercase,
                                     split=body.split, min_word_frequency=body.min_word_frequency,
                                     created_by=request.user)
    except QueueUnavailable as unsent:
        return Status(503, {"detail": str(unsent), "run": RunOut.of(unsent.record)})
    return Status(201, RunOut.of(run))


KEPT_FROM_PARENT = ("special_tokens", "pattern", "lowercase", "split", "min_word_frequency")


def _weighted(corpora: list) -> list:
    """Names as they are, a weighted corpus as ``{"name", "weight"}`` for the service."""
    return [c if isinstance(c, str) else {"name": c.name, "weight": c.weight} for c in corpora]


def _start_extension(request, body: RunIn) -> TrainingRun:
    given = [name for name in KEPT_FROM_PARENT if getattr(body, name) is not None]
    if given or "algorithm" in body.model_fields_set:
        name = given[0] if given else "algorithm"
        raise Invalid(f"{name} is kept from the parent {body.extends}: an extension run takes "
                      f"only corpora, vocab_size, min_frequency and sweep", field=name)
    return start_extension_run(extends=body.extends, corpora=_weighted(body.corpora),
                               vocab_size=body.vocab_size, min_frequency=body.min_frequency,
                               sweep=body.sweep, tokenizer_name=body.tokenizer,
                               created_by=request.user)


def _run(run_id: int) -> TrainingRun:
    return get_object_or_404(TrainingRun.objects.select_related("tokenizer"), pk=run_id)


@router.get("/{run_id}", response={200: RunOut, **ERRORS}, auth=READ)
def get_run(request, run_id: int):
    return RunOut.of(_run(run_id))


@router.post("/{run_id}/cancel", response={200: RunOut, **ERRORS}, auth=WRITE)
def cancel_run(request, run_id: int):
    """The user who started the run, or staff (403 for anyone else)."""
    return RunOut.of(cancel_training_run(run=_run(run_id), user=request.user))


@router.delete("/{run_id}", response={204: None, **ERRORS}, auth=WRITE)
def remove_run(request, run_id: int):
    """Delete a finished run that made no version (204): the user who started it or staff
    (403 for anyone else); 409 saying what depends on it, or that it is not finished."""
    delete_run(run=_run(run_id), user=request.user)
    return Status(204, None)
