"""``spm_offsets``: the normalizer's offsets computed with numpy for texts of plain ASCII bytes
equal the library's ``normalize(with_offsets=True)``, text by text, for models whose rules
differ (NFKC, NFKC with case folding, identity, user-defined pieces, no dummy prefix, extra
whitespace kept), on random texts of an adversarial alphabet (whitespace runs at the start,
middle and end, control bytes, bytes that begin an NFKC composition, non-ASCII), multilingual
samples and a slice of a real corpus when one is on the machine; the bytes a model's rules or
pieces make special are not plain, and a wrong table fails the probe."""

from __future__ import annotations

import functools
import io
import random
from pathlib import Path

import numpy as np
import pytest

from tests.bpe.corpora import SAMPLES, varied_text
from tests.engines.test_eval_fast import VARIED, docs_of
from tests.engines.trained import TRAINING_LINES
from tokenizers_app.engines import read_engine_files
from tokenizers_app.engines.spm import _field
from tokenizers_app.engines.spans import span_columns
from tokenizers_app.engines.spm_offsets import NormalizedOffsets, plain_bytes, probe_ok

ALPHABET = [" ", "  ", "\n", "\t", "\r", "\r\n", "a", "b", "A", "e", ".", "'", "ab", "x y",
            "\x0b", "\x0c", "\x1f", "\x7f", "\x01", "\x00", "\u0301", "é", "\u2581", "\u3000",
            "\u00a0", "ﬁ", "Ａ", "東"]
CORPUS = Path("/work/corpora/en_10M.txt")
OPTIONS = {
    "nmt_nfkc": {},
    "nmt_nfkc_cf": {"normalization_rule_name": "nmt_nfkc_cf"},
    "identity": {"normalization_rule_name": "identity"},
    "user_defined": {"user_defined_symbols": ["ab", "x y", "\t"]},
    "no_dummy": {"add_dummy_prefix": False},
    "keep_spaces": {"remove_extra_whitespaces": False},
}


@functools.cache
def model(name: str, model_type: str = "unigram"):
    import sentencepiece

    data = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(TRAINING_LINES), model_writer=data, vocab_size=500,
        model_type=model_type, num_threads=1, minloglevel=2, **OPTIONS[name])
    return read_engine_files({"m.model": data.getvalue()})


def texts(seed: int, count: int = 3000) -> list[bytes]:
    rng = random.Random(seed)
    made = ["".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 14)))
            for _ in range(count)]
    made += docs_of(VARIED) + docs_of(varied_text(20_000, seed=seed)) + list(SAMPLES.values())
    made += ["", " ", "\n", "\n\n", " a", "a\n", " \t a  b \n", "a" * 50 + "\n" + " " * 9]
    if CORPUS.is_file():
        with open(CORPUS, encoding="utf-8", errors="replace") as stream:
            made += docs_of(stream.read(300_000))
    return [text.encode() for text in made]


def library_offsets(engine, encoded: list[bytes]) -> tuple[list[int], list[int]]:
    """The library's offsets of each text, one text after the other, and their counts."""
    found = [offsets for _, offsets in engine._sp.normalize(encoded, with_offsets=True)]
    return [offset for offsets in found for offset in offsets], list(map(len, found))


@pytest.mark.parametrize("name", sorted(OPTIONS))
@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
def test_offsets_equal_the_library(name, model_type):
    engine = model(name, model_type)
    offsets = NormalizedOffsets(engine._sp, engine.canonical, _field)
    encoded = texts(seed=len(name) + len(model_type))
    flat, counts = offsets(encoded)
    assert (flat.tolist(), counts.tolist()) == library_offsets(engine, encoded)
    lengths = np.array(list(map(len, encoded)))
    chosen = offsets._plain_texts(np.frombuffer(b"".join(encoded), dtype=np.uint8), lengths)
    if name in ("keep_spaces",):  # its options are not read: every text to the library
        assert offsets.plain is None
    else:
        assert offsets.plain is not None and chosen.sum() >= 100


def test_plain_bytes_follow_the_rules_and_pieces():
    def plain(name):
        engine = model(name)
        tables = plain_bytes(engine.canonical, _field)
        return None if tables is None else bytes(np.flatnonzero(tables[0]).tolist())

    def spaces(name):
        return bytes(np.flatnonzero(plain_bytes(model(name).canonical, _field)[1]).tolist())

    assert b"a" in plain("nmt_nfkc") and b"A" in plain("nmt_nfkc") and b"\x01" not in plain(
        "nmt_nfkc")
    assert spaces("nmt_nfkc") == b"\t\n\r "
    assert b"A" not in plain("nmt_nfkc_cf") and b"a" in plain("nmt_nfkc_cf")  # folded
    assert b"a" not in plain("user_defined") and b"x" not in plain("user_defined")
    assert b"\t" not in plain("user_defined") and b"b" in plain("user_defined")
    assert spaces("identity") == b" " and b"\n" in plain("identity")
    assert plain("keep_spaces") is None


def test_a_wrong_table_fails_the_probe():
    engine = model("nmt_nfkc")
    plain, space = plain_bytes(engine.canonical, _field)
    assert probe_ok(engine._sp, plain, space, True)
    assert not probe_ok(engine._sp, plain, space, False)  # the dummy prefix forgotten
    wrong = space.copy()
    wrong[ord("a")] = True
    assert not probe_ok(engine._sp, plain, wrong, True)
    wrong = space.copy()
    wrong[ord("\n")] = False
    assert not probe_ok(engine._sp, plain, wrong, True)


def test_batch_columns_use_the_computed_offsets():
    """The Unigram test model (NFKC) computes the offsets of its plain texts: its columns
    equal the span columns of the library's offset mapping, and no plain text is asked."""
    engine = model("nmt_nfkc")
    docs = [text.decode() for text in texts(seed=5, count=500)]
    engine.batch_columns(docs[:1])
    asked = []
    original = engine._sp.normalize
    engine._sp.normalize = lambda some, **options: asked.extend(some) or original(some,
                                                                                  **options)
    try:
        columns = engine.span_columns(docs)
    finally:
        engine._sp.normalize = original
    assert columns == [span_columns(engine.token_spans(doc, ())) for doc in docs]
    plain = [doc for doc in docs if doc.isascii() and doc.endswith((" ", "\n", "\t", "\r"))
             and not any(c in doc for c in "\x0b\x0c\x1f\x7f\x01\x00")]
    assert plain and not set(asked) & {doc.encode() for doc in plain}


@pytest.mark.parametrize("name", sorted(OPTIONS))
@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
def test_plain_lines_round_trip_as_the_library(name, model_type):
    """``spm_lines``' plain lines (decided without ``normalize``) and the others: each line's
    round trip equals the library's encode then decode; most ASCII lines are plain."""
    engine = model(name, model_type)
    rng = random.Random(len(name))
    ascii_pieces = [piece for piece in ALPHABET if piece.isascii() and "\n" not in piece]
    lines = ["".join(rng.choice(ascii_pieces) for _ in range(rng.randrange(0, 10)))
             for _ in range(3000)]
    lines += [line.rstrip("\r") for text in texts(seed=3, count=0) for line in
              text.decode().split("\n")]
    lines = list(dict.fromkeys(line.replace("\n", "") for line in lines))
    engine.round_trips([])  # made
    asked, original = [], engine._sp.normalize
    engine._sp.normalize = lambda some, **options: asked.extend(some) or original(some,
                                                                                  **options)
    try:
        found = engine.round_trips(lines)
    finally:
        engine._sp.normalize = original
    assert found == [engine.decode(engine.encode_ordinary(line)) == line for line in lines]
    assert any(found) and not all(found)
    table = engine._round_trip._plain_safe  # the plain bytes that are spaces or pieces
    if engine._round_trip.usable and name != "keep_spaces":
        plain = [line for line in lines if line.isascii() and all(table[ord(c)] for c in line)]
        assert len(plain) > 500 and not set(asked) & set(plain)
        assert len(asked) <= len(lines) - len(plain)


@pytest.mark.parametrize("name", sorted(OPTIONS))
@pytest.mark.parametrize("model_type", ["unigram", "bpe"])
def test_words_covered_as_the_library(name, model_type):
    """``spm_words``: each word's coverage equals one encode's (one token, not special), on
    the model's own pieces as words, their neighbours, random and multilingual words; the
    plain words that are no piece are not encoded."""
    engine = model(name, model_type)
    pieces = [token.decode() for token in engine.vocab.values()]
    words = [piece.lstrip("\u2581") for piece in pieces]
    words += [word + suffix for word in words[:200] for suffix in ("s", "x", "\u0301")]
    rng = random.Random(len(name))
    words += ["".join(rng.choice("abeAxy.'-é東\u2581\u0301") for _ in range(rng.randrange(1, 8)))
              for _ in range(3000)]
    words += [word for text in SAMPLES.values() for word in text.split()] + VARIED.split()
    words = list(dict.fromkeys(word for word in words if word and not word.isspace()))
    asked, original = [], engine.encode_ordinary_batch
    engine.encode_ordinary_batch = lambda some: asked.extend(some) or original(some)
    try:
        found = engine.words_covered(words)
    finally:
        del engine.encode_ordinary_batch
    special = set(engine.special_ids.values())
    assert found == [len(ids) == 1 and ids[0] not in special
                     for ids in map(engine.encode_ordinary, words)]
    assert any(found) and not all(found)
    if name == "keep_spaces":  # its options are not read: every word encoded
        assert asked == words
    elif name != "user_defined":  # (there "a", "b", "x" start pieces: not plain)
        assert len(asked) < len(words) * 0.8
