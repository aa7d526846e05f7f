"""A batch's totals as a sandbox child sends them to its parent (``remote.SandboxedEngine
.documents_totals``): its counts and ids as they are, its words as columns rather than a JSON
object of ``[count, covered]`` lists, so that neither process makes or parses an object per
word: the words one string (a word never holds White_Space, so ``"\\n"`` joins them), their
counts a list, their coverage one string of ``0`` and ``1``.
``from_wire(to_wire(totals)).comparable() == totals.comparable()``."""

from __future__ import annotations

from ..bpe.eval_totals import EvalTotals


def to_wire(totals: EvalTotals, words: dict | None = None, covered: list | None = None) -> dict:
    """``words`` (a word's count by word) and ``covered`` (each one's coverage, in its order):
    the words given as columns, not in the totals (``evaluation.documents_wire``)."""
    if words is None:
        words = {word: count for word, (count, _) in totals.words.items()}
        covered = [flag for _, flag in totals.words.values()]
    return {"counts": dict(totals.counts), "ids": [list(totals.ids), list(totals.ids.values())],
            "words": "\n".join(words), "word_counts": list(words.values()),
            "covered": "".join(map("01".__getitem__, covered)), "seconds": totals.seconds}


def from_wire(data: dict) -> EvalTotals:
    """``ValueError`` for columns that do not match."""
    ids, counts = data["ids"]
    words = data["words"].split("\n") if data["words"] else []
    word_counts, covered = data["word_counts"], data["covered"]
    if not (len(ids) == len(counts) and len(words) == len(word_counts) == len(covered)) \
            or covered.strip("01"):
        raise ValueError("a batch's totals whose columns do not match")
    totals = EvalTotals()
    totals.counts.update(data["counts"])
    totals.ids.update(dict(zip(map(int, ids), counts)))
    totals.words = {word: [count, flag == "1"]
                    for word, count, flag in zip(words, word_counts, covered)}
    totals.seconds = float(data.get("seconds", 0.0))
    return totals
