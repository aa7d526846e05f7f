"""An evaluation's words kept in the sandbox child across its batches, so that they cross to the
parent once rather than with every batch.

A sandboxed engine's evaluation (``evaluation.library_totals``) names a *session*. Each batch
sent under it is counted in the child as one process counts its batches
(``running_words.count``: one tally of the session's words, only its new words asked
whether they are covered) and answered without its words. The words cross when the evaluation
asks for them (``flush``), or earlier, with a batch's answer, when the child holds more than
``KEPT_WORDS`` of them or is about to retire (near its processor-time limit: ``flush_into``).

Each batch carries its number in the session since the words last crossed, and ``flush`` the
count. A child that holds a different count (a new child: the one holding the words is gone)
refuses the request in words, so words are never lost without an error: the evaluation's part
fails, and a re-evaluation redoes only the parts not done. At most ``SESSIONS_KEPT`` sessions
are kept (the oldest forgotten: its evaluation then fails so).
"""

from __future__ import annotations

from collections import Counter, OrderedDict

from ..bpe.eval_totals import EvalTotals
from .totals_wire import to_wire

KEPT_WORDS = 1 << 20  # distinct words a session keeps before they cross with a batch's answer
SESSIONS_KEPT = 2  # a worker's child evaluates one at a time: one more (a failed one's) at most
LOST = ("this evaluation's words were lost: the tokenizer process that counted them was "
        "replaced; evaluate again (only the parts not done are redone)")
_SESSIONS: OrderedDict[str, dict] = OrderedDict()


def batch(engine, texts: list[str], memo: dict, session: str, number: int) -> dict:
    """The wire answer (``totals_wire``) of a batch counted under ``session``, its words kept
    here (or, past ``KEPT_WORDS``, crossing with it); ``memo``: the child's memo of the engine
    (its lines' round trips are shared with it); ``number``: the batch's number in the session
    since its words last crossed."""
    from .evaluation import documents_wire

    state = _SESSIONS.get(session)
    if state is None:
        state = _SESSIONS[session] = {"into": True, "batches": 0}
        while len(_SESSIONS) > SESSIONS_KEPT:
            _SESSIONS.popitem(last=False)
    _SESSIONS.move_to_end(session)
    if state["batches"] + 1 != number:
        del _SESSIONS[session]
        raise ValueError(LOST)
    state["lines"] = memo.setdefault("lines", {})
    wire = documents_wire(engine, texts, state)  # (``into`` set: the words counted in state)
    state["batches"] += 1
    if len(state.get("running", ())) > KEPT_WORDS:
        flush_into(wire, session)
    return wire


def flush(session: str, number: int) -> dict:
    """The wire answer holding the session's words (and nothing else), the session forgotten;
    ``ValueError`` when the child did not count ``number`` batches under it."""
    state = _SESSIONS.pop(session, None)
    if (state["batches"] if state else 0) != number:
        raise ValueError(LOST)
    return _words_wire(state or {})


def flush_into(wire: dict, session: str) -> None:
    """A batch's wire answer given the session's words too, the session forgotten
    (``"flushed"``: the parent counts its batches anew)."""
    words = _words_wire(_SESSIONS.pop(session, None) or {})
    for name in ("words", "word_counts", "covered"):
        wire[name] = words[name]
    if words["counts"]:
        counts = wire["counts"]
        counts["covered_words"] = counts.get("covered_words", 0) + words["counts"]["covered_words"]
    wire["flushed"] = True


def _words_wire(state: dict) -> dict:
    running = state["running"].counter() if "running" in state else Counter()
    covered = state.get("covered", set())
    totals = EvalTotals()
    found = sum(map(running.__getitem__, covered))
    if found:
        totals.counts["covered_words"] = found
    return to_wire(totals, running, list(map(covered.__contains__, running)))
