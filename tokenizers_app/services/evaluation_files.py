"""The files of an evaluation in parts, in the store: each part's totals
(``evaluations/ID/attempt-N/part-K.json``: counts, ids, its most frequent whitespace words)
and, beside them, its distinct words sorted, one JSON line each (``part-K.words.jsonl``,
``bpe.eval_words``). The merge holds the totals of one part at a time and one line of each
part's words, so its memory does not grow with the corpus's vocabulary."""

from __future__ import annotations

import json
from collections import Counter
from contextlib import ExitStack

from ..bpe.eval_totals import EvalTotals
from ..bpe.eval_words import distinct_words, read_word_lines, sorted_words, word_lines
from ..storage import Store

FREQUENT_KEPT = 50_000  # the most frequent whitespace words a part keeps (for the compare page)
WORDS_SUFFIX = ".words.jsonl"


def words_name(totals_name: str) -> str:
    """``words_name("evaluations/7/attempt-1/part-0.json")`` ->
    ``"evaluations/7/attempt-1/part-0.words.jsonl"``."""
    return totals_name.removesuffix(".json") + WORDS_SUFFIX


def write_part(store: Store, name: str, totals: EvalTotals, frequent: Counter[str]) -> None:
    """Store a part's totals as ``name`` and its words beside it (written first: a part whose
    totals file exists has its words)."""
    with store.writer(words_name(name)) as writer:
        for line in word_lines(totals.words):
            writer.write(line)
    found = json.loads(totals.to_json())
    del found["words"]  # (in the words file)
    found["frequent"] = frequent.most_common(FREQUENT_KEPT)
    store.write_bytes(name, json.dumps(found, ensure_ascii=False).encode())


def merged_parts(store: Store, names: list[str]) -> tuple[EvalTotals, Counter[str]]:
    """The parts' totals summed (their distinct words counted across parts without holding
    them: ``EvalTotals.distinct``) and their frequent words. A part written before words
    files existed holds its words in its totals file: they are merged the same way."""
    merged, frequent, sources = EvalTotals(), Counter(), []
    with ExitStack() as open_files:
        for name in names:
            found = json.loads(store.read_bytes(name))
            frequent.update(dict(found.pop("frequent", [])))
            held = found.pop("words", None)  # an older part's words, in its totals file
            merged.merge(EvalTotals.from_json({**found, "words": {}}))
            sources.append(sorted_words(held) if held is not None else read_word_lines(
                open_files.enter_context(store.open(words_name(name)))))
        merged.distinct = distinct_words(sources)
    return merged, frequent
