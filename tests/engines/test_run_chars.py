"""``batch_totals.run_chars`` (the unknown and byte-fallback characters of a batch at once)
equals ``evaluation._chars_in`` text by text: runs cut at texts' ends, runs whose ends fall
inside a character (decoded with replacement), empty and inverted spans, spans past the end,
on random spans over multilingual text and on every library kind's real spans."""

from __future__ import annotations

import random

import numpy as np
import pytest

from tests.bpe.corpora import SAMPLES, varied_text
from tests.engines.test_engines import KINDS
from tests.engines.test_eval_fast import VARIED, docs_of
from tokenizers_app.engines import batch_totals, read_engine_files
from tokenizers_app.engines.evaluation import _chars_in, documents, documents_totals


def by_text(data: bytes, chosen, starts, ends, doc) -> int:
    """``_chars_in`` per text, as ``evaluation`` counted before."""
    total = 0
    for k in sorted(set(doc)):
        picked = [i for i, d in enumerate(doc) if d == k]
        spans = [(int(chosen[i]), starts[i], ends[i]) for i in picked]
        total += _chars_in(data, spans, lambda marked: marked == 1)
    return total


def test_a_small_example_by_hand():
    data = "aé東b".encode()  # 1 + 2 + 3 + 1 bytes
    assert batch_totals.run_chars(data, [True, True, False], [0, 1, 3], [1, 3, 4], [0, 0, 0]) \
        == 2
    # a run ending inside 東: decoded with replacement (one character for the cut bytes)
    assert batch_totals.run_chars(data, [True, True], [1, 3], [3, 5], [0, 0]) == \
        len(data[1:5].decode("utf-8", errors="replace"))
    # the same tokens in two texts: two runs, not one
    assert batch_totals.run_chars(data, [True, True], [0, 0], [3, 3], [0, 1]) == 4
    assert batch_totals.run_chars(data, [True], [4, ], [2], [0]) == 0  # inverted
    assert batch_totals.run_chars(data, [True], [5], [99], [0]) == \
        len(data[5:99].decode("utf-8", errors="replace"))


@pytest.mark.parametrize("seed", range(20))
def test_random_runs_equal_the_walk_text_by_text(seed):
    rng = random.Random(seed)
    text = (SAMPLES["chinese"][:30] + "é🍕a b\x01" + varied_text(300, seed=seed))
    data = text.encode()
    count = rng.randrange(0, 60)
    starts = sorted(rng.randrange(0, len(data) + 3) for _ in range(count))
    ends = [s + rng.choice([0, 1, 1, 2, 3, 4, -1]) for s in starts]
    if rng.random() < 0.5:  # unordered spans too
        rng.shuffle(ends)
    chosen = [rng.random() < 0.6 for _ in range(count)]
    doc = sorted(rng.randrange(0, 4) for _ in range(count))
    assert batch_totals.run_chars(data, np.array(chosen, bool), np.array(starts, np.int64),
                                  np.array(ends, np.int64), np.array(doc, np.int64)) == \
        by_text(data, chosen, starts, ends, doc)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_kinds_totals_equal_the_per_document_path(kind):
    """Every library kind's unknown and byte-fallback characters over a varied batch equal
    the path without ``batch_columns`` (document by document, ``_rare_chars``)."""
    engine = read_engine_files(KINDS[kind]())

    class OldPath:
        def __getattr__(self, name):
            if name in ("batch_columns",):
                raise AttributeError(name)
            return getattr(engine, name)

    text = VARIED + "\n\n" + varied_text(30_000, seed=5) + "\n\n" + "\x01\x02 東京 🍕\n"
    docs = ["".join(doc) for doc in documents(text.splitlines(keepends=True))]
    fast = documents_totals(engine, docs, {})
    old = documents_totals(OldPath(), docs, {})
    assert fast.comparable() == old.comparable()
    assert fast.counts["unknown_chars"] + fast.counts["byte_fallback_chars"] > 0
    assert len(docs_of(text)) == len(docs)
