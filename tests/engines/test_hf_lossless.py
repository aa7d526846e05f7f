"""A Hugging Face engine's lossless lines (``hf_lossless``): a line with a character that no
decoding writes is lossy without asking the library, and every answer equals
``decode(encode_ordinary(line)) == line`` asked of the library line by line."""

from __future__ import annotations

import json
import random

import pytest

from tests.bpe.corpora import SAMPLES
from tests.engines.test_engines import KINDS
from tests.engines.test_hf_eval import TRICKY
from tokenizers_app.engines import read_engine_files
from tokenizers_app.engines.hf_lossless import output_chars, round_trips

ALPHABET = [" ", " ", "a", "b", "the", "The", "E", "é", "東", "🍕", ".", ",", "'", "▁", "\t",
            "\x01", "[UNK]", "##", "<s>", "n't", " do not", "\u3000", "Ｆ", "e\u0301", "ǅ"]


def _lines(seed: int, count: int = 400) -> list[str]:
    rng = random.Random(seed)
    lines = ["".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 12)))
             for _ in range(count)]
    for sample in SAMPLES.values():
        lines += sample.splitlines()[:20]
    return list(dict.fromkeys(lines + [line.rstrip("\r\n") for line in TRICKY]))


def _asked(engine, lines: list[str]) -> list[bool]:
    return [engine.decode(engine.encode_ordinary(line)) == line for line in lines]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("kind", ["llama-bpe", "bert-wordpiece", "unigram"])
def test_round_trips_equal_the_library_line_by_line(kind, seed):
    engine = read_engine_files(KINDS[kind]())
    lines = _lines(seed)
    engine.span_columns(["\n".join(lines[:50]) + "\n"])  # some lines' ids from a document
    found = engine.round_trips(lines)
    assert found == _asked(engine, lines)
    assert any(found) and not all(found)


def test_a_lowercasing_wordpiece_never_asks_for_a_line_with_a_capital():
    engine = read_engine_files(KINDS["bert-wordpiece"]())
    assert engine._output_chars is not None and "T" not in engine._output_chars
    lines = _lines(0)
    asked: list[str] = []
    encode = engine.encode_ordinary_batch
    found = round_trips(lines, engine._output_chars,
                        lambda texts: asked.extend(texts) or encode(texts), engine.decode_batch)
    assert found == _asked(engine, lines)
    assert asked and not any("T" in line or "東" in line for line in asked)
    assert set(asked) == {line for line in lines if engine._output_chars.issuperset(line)}


def test_a_character_set_too_small_would_be_caught():
    """The comparison can fail: leaving out a character that the decoder does write (the
    space between tokens) calls lossless lines lossy."""
    engine = read_engine_files(KINDS["bert-wordpiece"]())
    words = sorted(piece.decode() for piece in engine.vocab.values()
                   if piece.isalpha() and piece.islower())[:40]
    lines = [" ".join(words[k:k + 3]) for k in range(0, 40, 3)]
    assert any(_asked(engine, lines))
    wrong = round_trips(lines, engine._output_chars - {" "}, engine.encode_ordinary_batch,
                        engine.decode_batch)
    assert wrong != _asked(engine, lines)


@pytest.mark.parametrize("decoder, extra", [
    (None, " "),
    ({"type": "WordPiece", "prefix": "##", "cleanup": True}, " '"),
    ({"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True}, " "),
    ({"type": "Sequence", "decoders": [{"type": "Strip", "content": " ", "start": 1, "stop": 0},
                                       {"type": "Fuse"}]}, " "),
    ({"type": "ByteFallback"}, None),
    ({"type": "ByteLevel"}, None),
    ({"type": "Replace", "pattern": {"String": "▁"}, "content": "x"}, None),
    ({"type": "Sequence", "decoders": [{"type": "Fuse"}, {"type": "ByteFallback"}]}, None),
])
def test_the_characters_a_decoder_can_write(decoder, extra):
    found = output_chars({"decoder": decoder}, ["ab", "▁c"])
    assert found == (None if extra is None else frozenset("ab▁c" + extra))


def test_an_engine_whose_decoder_writes_bytes_asks_every_line():
    doc = json.loads(KINDS["llama-bpe"]()["tokenizer.json"])
    doc["decoder"] = {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"},
        {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
    engine = read_engine_files({"tokenizer.json": json.dumps(doc).encode()})
    assert engine._output_chars is None
    lines = _lines(2)
    found = engine.round_trips(lines)
    assert found == _asked(engine, lines) and any(found)


@pytest.mark.parametrize("kind", ["llama-bpe", "unigram"])
def test_without_a_decoder_only_lines_starting_as_a_decoding_can_are_asked(kind):
    """No decoder (a file trained without one), a Metaspace pipeline: a decoded text starts
    with the mark, ``<`` (a byte piece) or the unknown token's first character, so only such
    lines (and empty ones) are asked; the answers equal the library's."""
    doc = json.loads(KINDS[kind]()["tokenizer.json"])
    doc["decoder"] = None
    engine = read_engine_files({"tokenizer.json": json.dumps(doc).encode()})
    assert engine._first_chars is not None and {"▁", "<"} <= engine._first_chars
    pieces = [piece.decode() for piece in engine.vocab.values()]
    lines = _lines(5) + pieces + [" " + piece for piece in pieces] + ["<unk>", "<s> a", "<0x41>"]
    lines = list(dict.fromkeys(lines))
    asked: list[str] = []
    encode = engine.encode_ordinary_batch
    found = round_trips(lines, engine._output_chars, lambda texts: asked.extend(texts) or
                        encode(texts), engine.decode_batch, engine._first_chars)
    assert found == _asked(engine, lines)
    assert sum(found) > 20
    assert asked and all(not line or line[0] in engine._first_chars for line in asked)
    assert len(asked) < len(lines) / 2
    wrong = round_trips(lines, engine._output_chars, encode, engine.decode_batch,
                        engine._first_chars - {"▁"})
    assert wrong != found  # (a set without the mark would be caught)


def test_the_first_characters_are_known_only_without_a_decoder_under_metaspace():
    from tokenizers_app.engines.hf_lossless import first_chars
    from tokenizers_app.engines.hf_parts import line_rule

    llama = {**json.loads(KINDS["llama-bpe"]()["tokenizer.json"]), "decoder": None}
    assert first_chars(llama, line_rule(llama)) == frozenset("▁<")
    with_decoder = {**llama, "decoder": {"type": "Fuse"}}
    assert first_chars(with_decoder, line_rule(with_decoder)) is None
    suffixed = {**llama, "model": {**llama["model"], "end_of_word_suffix": "</w>"}}
    assert first_chars(suffixed, line_rule(suffixed)) is None
    bert = json.loads(KINDS["bert-wordpiece"]()["tokenizer.json"])
    assert first_chars({**bert, "decoder": None}, line_rule(bert)) is None
    added = {**llama, "added_tokens": llama["added_tokens"] + [
        {**llama["added_tokens"][0], "id": 9999, "content": "Xy", "special": True}]}
    assert first_chars(added, line_rule(added)) == frozenset("▁<X")


SPACED = ["the  cat", " the cat", "the cat ", "the cat", "a , b", "  ", " ", "do not", "x",
          "the quick brown fox", "the  quick", "it 's", "don't stop", ""]


@pytest.mark.parametrize("kind", ["bert-wordpiece", "no-decoder-llama"])
def test_lines_with_a_space_at_an_end_or_two_in_a_row_are_not_asked(kind):
    """WordPiece's decoder (or none) writes single spaces between tokens without spaces: such
    lines are lossy unasked, the rest asked; the answers equal the library's."""
    if kind == "no-decoder-llama":
        doc = json.loads(KINDS["llama-bpe"]()["tokenizer.json"])
        doc["decoder"] = None
        engine = read_engine_files({"tokenizer.json": json.dumps(doc).encode()})
    else:
        engine = read_engine_files(KINDS[kind]())
    assert engine._single_spaces
    lines = SPACED + _lines(7)
    asked: list[str] = []
    encode = engine.encode_ordinary_batch
    found = round_trips(lines, engine._output_chars, lambda texts: asked.extend(texts) or
                        encode(texts), engine.decode_batch, engine._first_chars, True)
    assert found == _asked(engine, lines) == engine.round_trips(lines)
    assert not [line for line in asked if "  " in line or line[:1] == " " or line[-1:] == " "]


def test_a_decoder_that_writes_spaces_of_its_own_is_not_spaced():
    """Metaspace's decoder turns each mark into a space: two marks, two spaces, and a line
    with two spaces in a row may round-trip (the flag would be wrong there)."""
    from tokenizers_app.engines.hf_lossless import single_spaces

    engine = read_engine_files(KINDS["unigram"]())
    assert not engine._single_spaces
    lines = ["the  cat", "a  b", "in  the", "x  y", "the cat"]
    truth = _asked(engine, lines)
    assert any(truth[:-1])
    wrong = round_trips(lines, engine._output_chars, engine.encode_ordinary_batch,
                        engine.decode_batch, None, True)
    assert wrong != truth
    assert not single_spaces({"decoder": None}, ["a", "b c"])
    assert not single_spaces({"decoder": None}, ["a", ""])
    assert single_spaces({"decoder": {"type": "WordPiece", "prefix": "##"}}, ["a", "##b"])
