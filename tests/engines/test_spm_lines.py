"""``spm_lines.LineRoundTrip``: whether each line decodes back to itself, decided from the
library's ``normalize`` where that is provably the decode, equals the library's own encode then
decode, line by line, on both test models (BPE with byte fallback and identity normalization;
Unigram with NFKC), over varied lines; the lines it cannot decide, and a model it cannot read,
go to the library."""

from __future__ import annotations

import pytest

from tests.bpe.corpora import SAMPLES
from tests.engines.test_engines import KINDS
from tests.engines.test_eval_fast import VARIED
from tokenizers_app.engines import read_engine_files

CRAFTED = ["", " ", "  a", "a ", "a  b", "\u2581x", "x\u2581", "\u2581", "\t", "\ta\t", "\u3000a",
           "\ufb01ne", "\uff21b", "\u2603", "a\x01b", "e\u0301", "\u2047", " \u2047 ", "\u00a0",
           "hello world", "Hello, World!", "x" * 300, "a\u200bb", "\u2028", "<s>", "</s>"]


def lines_of(text: str) -> list[str]:
    return [line.rstrip("\r\n") for line in text.split("\n")]


def library_round_trips(engine, lines):
    return [engine.decode(engine.encode_ordinary(line)) == line for line in lines]


@pytest.mark.parametrize("kind", ["sentencepiece-bpe", "sentencepiece-unigram"])
def test_round_trips_equal_the_library(kind):
    engine = read_engine_files(KINDS[kind]())
    lines = CRAFTED + lines_of(VARIED) + [line for text in SAMPLES.values()
                                          for line in lines_of(text)]
    found = engine.round_trips(lines)
    assert found == library_round_trips(engine, lines)
    assert engine._round_trip.usable
    assert any(found) and not all(found)


@pytest.mark.parametrize("kind", ["sentencepiece-bpe", "sentencepiece-unigram"])
def test_most_lines_are_decided_without_the_encode(kind):
    engine = read_engine_files(KINDS[kind]())
    lines = [line for line in lines_of(SAMPLES["english"]) if line]
    asked = []
    engine.round_trips([])  # made
    checker = engine._round_trip
    original = checker._encode
    checker._encode = lambda some: asked.extend(some) or original(some)
    assert engine.round_trips(lines) == library_round_trips(engine, lines)
    assert len(asked) < len(lines) / 2
    checker.usable = False  # a model it cannot read: every line to the library
    asked.clear()
    assert engine.round_trips(lines) == library_round_trips(engine, lines)
    assert asked == lines
