"""The Hugging Face engine's ``batch_columns`` made for the whole batch at once (``hf_columns``)
equals the plain path: each document's ``span_columns`` (``text_columns``), moved to its byte
place and joined, with the same documents remembered for the lines and words, on random and
adversarial text (byte pieces to spread, shared spans, CJK, emoji, controls, empty documents),
a real corpus's slices and multilingual text."""

from __future__ import annotations

import random
from itertools import accumulate, chain
from pathlib import Path

import numpy as np
import pytest

from tests.bpe.corpora import SAMPLES, varied_text
from tests.engines.test_engines import KINDS
from tests.engines.test_eval_fast import VARIED, docs_of
from tests.engines.test_hf_eval import TRICKY
from tokenizers_app.engines import read_engine_files
from tokenizers_app.engines.evaluation import batches, documents

KIND_NAMES = ["llama-bpe", "bert-wordpiece", "unigram"]
CORPORA = Path(__file__).resolve().parents[3] / "corpora"


def plain_columns(engine, texts: list[str]):
    """What ``batch_columns`` gave before: ``span_columns`` per text, joined."""
    found = engine.span_columns(texts)
    id_lists = [ids for ids, _, _ in found]
    places = list(accumulate((len(text.encode()) for text in texts), initial=0))[:-1]
    shift = np.repeat(np.asarray(places, np.int64), list(map(len, id_lists)))
    starts = np.fromiter(chain.from_iterable(c[1] for c in found), np.int64) + shift
    ends = np.fromiter(chain.from_iterable(c[2] for c in found), np.int64) + shift
    ids = np.fromiter(chain.from_iterable(id_lists), np.int64)
    return id_lists, ids, starts, ends, places


def assert_same(engine, texts: list[str]) -> None:
    plain = plain_columns(engine, texts)
    remembered = list(engine._parts.docs)
    fast = engine.batch_columns(texts)
    assert fast[0] == plain[0] and fast[4] == plain[4]
    for mine, theirs in zip(fast[1:4], plain[1:4]):
        assert mine.tolist() == theirs.tolist()
    assert engine._parts.docs == remembered


def _random_docs(seed: int) -> list[str]:
    rng = random.Random(seed)
    alphabet = [" ", "  ", "\n", "\n\n", "\t", "\r\n", "a", "The", "é", "東京", "🍕", "\x01",
                "\x02\x03", "▁", "e\u0301", "Ｆ", "한", "\U0001F468\u200d\U0001F469", "[UNK]",
                "<s>", "ǅ", "\u3000", "ab" * 5, "..."]
    return ["".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 30)))
            for _ in range(200)]


@pytest.mark.parametrize("kind", KIND_NAMES)
def test_fixed_and_adversarial_documents(kind):
    engine = read_engine_files(KINDS[kind]())
    texts = docs_of(VARIED) + TRICKY + ["", "x", "", "\x01\x02 \x03", "東", "\n", "▁▁"]
    assert_same(engine, texts)
    assert_same(engine, texts[::-1])
    assert_same(engine, ["".join(texts)])
    assert_same(engine, [""])


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("kind", KIND_NAMES)
def test_random_documents(kind, seed):
    assert_same(read_engine_files(KINDS[kind]()), _random_docs(seed))


@pytest.mark.parametrize("kind", KIND_NAMES)
def test_varied_and_multilingual_text_in_batches(kind):
    engine = read_engine_files(KINDS[kind]())
    text = varied_text(200_000, seed=7) + "\n\n" + "\n\n".join(SAMPLES.values())
    for batch in batches(documents(text.splitlines(keepends=True)), 1 << 16):
        assert_same(engine, ["".join(doc) for doc in batch])


def test_some_documents_take_the_plain_path_and_some_do_not():
    """The llama-style BPE spreads an unseen CJK character's three byte pieces (the document
    is redone) and takes a newline's one byte piece as it is."""
    engine = read_engine_files(KINDS["llama-bpe"]())
    redone = []
    plain = engine.text_columns
    engine.text_columns = lambda text: redone.append(text) or plain(text)
    texts = ["a\nb\n", "\U0001F9EC x\n", "plain words\n"]
    assert_same(engine, texts)
    assert redone.count("\U0001F9EC x\n") == 2 and redone.count("a\nb\n") == 1  # (1: plain)


@pytest.mark.parametrize("name", ["en_10M.txt", "multi_10M.txt"])
@pytest.mark.parametrize("kind", KIND_NAMES)
def test_real_corpus_slices(kind, name):
    path = CORPORA / name
    if not path.exists():
        pytest.skip(f"no corpus at {path}")
    engine = read_engine_files(KINDS[kind]())
    with open(path, "rb") as stream:
        stream.seek(path.stat().st_size // 3)
        data = stream.read(300_000)
    text = data[data.find(b"\n") + 1:data.rfind(b"\n") + 1].decode("utf-8", errors="replace")
    for batch in batches(documents(text.splitlines(keepends=True)), 1 << 16):
        assert_same(engine, ["".join(doc) for doc in batch])
