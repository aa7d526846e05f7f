"""The Hugging Face engine's ``batch_columns`` made for the whole batch at once (``hf_columns``)
equals the plain path: each document's ``span_columns`` (``text_columns``), moved to its byte
place and joined, with the same documents remembered for the lines and words, on random and
adversarial text (byte pieces to spread, shared spans, CJK, emoji, controls, empty documents),
and real text in 99 languages."""

from __future__ import annotations

import random
from itertools import accumulate, chain

import numpy as np
import pytest

from tests.bpe.corpora import SAMPLES, varied_text
from tests.engines.test_engines import KINDS
from tests.engines.test_eval_fast import VARIED, docs_of
from tests.engines.test_hf_eval import TRICKY
from tests.real_text import django_messages
from tokenizers_app.engines import read_engine_files
from tokenizers_app.engines.evaluation import batches, documents

KIND_NAMES = ["llama-bpe", "bert-wordpiece", "unigram"]


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


@pytest.mark.parametrize("language", ["en", "multi"])
@pytest.mark.parametrize("kind", KIND_NAMES)
def test_real_text_slices(kind, language):
    """Django's own translations: its English messages whole, and 300 kB of every language's
    from a third of the way in, cut into documents at blank lines as evaluation does."""
    engine = read_engine_files(KINDS[kind]())
    text = django_messages(language)
    start = text.find("\n", len(text) // 3) + 1 if language == "multi" else 0
    lines = text[start:start + 300_000].splitlines(keepends=True)[:-1]
    lines = [line if k % 7 else "\n" for k, line in enumerate(lines, 1)]  # some blank lines
    for batch in batches(documents(lines), 1 << 16):
        assert_same(engine, ["".join(doc) for doc in batch])
