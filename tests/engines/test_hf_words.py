"""A Hugging Face engine's word coverage (``hf_words``): a word whose pre-tokenized form is not
one piece of the model is not covered, unasked, and every answer equals ``encode_ordinary(word)``
being one token that is not special, asked of the library word by word."""

from __future__ import annotations

import json
import random

import pytest

from tests.bpe.corpora import SAMPLES, varied_text
from tests.engines.test_engines import KINDS
from tests.engines.test_hf_eval import WORDS
from tests.real_text import django_messages
from tokenizers_app.engines import read_engine_files
from tokenizers_app.engines.hf_parts import line_rule
from tokenizers_app.engines.hf_words import covers, one_token_mark


def _asked(engine, words: list[str]) -> list[bool]:
    special = set(engine.special_ids.values())
    return [len(ids) == 1 and ids[0] not in special
            for ids in map(engine.encode_ordinary, words)]


def _words(engine, seed: int) -> list[str]:
    rng = random.Random(seed)
    pieces = [piece.decode() for piece in engine.vocab.values()]
    alphabet = ["a", "b", "e", "th", "▁", "▁▁", "東", "é", "\x01", "<0x41>", "<unk>", "'", "."]
    words = pieces + [piece.lstrip("▁") for piece in pieces] + ["▁" + piece for piece in pieces]
    words += ["".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 6)))
              for _ in range(300)]
    words += varied_text(20_000, seed=seed).split() + " ".join(SAMPLES.values()).split()
    words += [word for word in WORDS if word and not any(c.isspace() for c in word)]
    lines = django_messages("multi").splitlines()
    words += " ".join(rng.sample(lines, 4000)).split() + django_messages("en").split()
    return [word for word in dict.fromkeys(words) if word and word.split() == [word]]


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("kind", ["llama-bpe", "bert-wordpiece", "unigram"])
def test_covers_equals_the_library_word_by_word(kind, seed):
    engine = read_engine_files(KINDS[kind]())
    words = _words(engine, seed)
    engine.span_columns([" ".join(words[:200]) + "\n"])  # some words' ids from a document
    found = engine.words_covered(words)
    assert found == _asked(engine, words)
    assert 50 < sum(found) < len(words) - 50


@pytest.mark.parametrize("kind", ["llama-bpe", "unigram"])
def test_only_words_that_may_be_one_piece_are_asked(kind):
    engine = read_engine_files(KINDS[kind]())
    mark, pieces, _ = engine._one_token
    assert mark == "▁"
    words = _words(engine, 3) + ["東京大学"]
    asked: list[str] = []
    special = set(engine.special_ids.values())
    found = covers(words, mark, pieces, lambda texts: asked.extend(texts) or
                   engine.encode_ordinary_batch(texts), special)
    assert found == _asked(engine, words)
    assert 0 < len(asked) < len(words) / 2
    assert "東京大学" in words and "東京大学" not in asked


def test_a_piece_set_too_small_would_be_caught():
    engine = read_engine_files(KINDS["llama-bpe"]())
    mark, pieces, _ = engine._one_token
    words = _words(engine, 4)
    wrong = covers(words, mark, frozenset(list(pieces)[::2]), engine.encode_ordinary_batch,
                   set(engine.special_ids.values()))
    assert wrong != _asked(engine, words)


def _llama(change) -> dict:
    doc = json.loads(KINDS["llama-bpe"]()["tokenizer.json"])
    change(doc)
    return doc


@pytest.mark.parametrize("doc, allowed", [
    (_llama(lambda doc: None), True),
    (_llama(lambda doc: doc["model"].update(end_of_word_suffix="</w>")), False),
    (_llama(lambda doc: doc["model"].update(continuing_subword_prefix="##")), False),
    (_llama(lambda doc: doc["model"]["merges"].append(["<0x41>", "<0x42>"])), False),
    (_llama(lambda doc: doc["model"]["merges"].append("<unk> a")), False),
    (_llama(lambda doc: doc.update(normalizer={"type": "Lowercase"})), False),
    (json.loads(KINDS["bert-wordpiece"]()["tokenizer.json"]), False),
    (json.loads(KINDS["unigram"]()["tokenizer.json"]), True),
])
def test_the_pipelines_that_allow_it(doc, allowed):
    pieces = {}
    for token in doc.get("added_tokens") or []:
        pieces[token["content"]] = token["id"]
    special = {token["id"] for token in doc.get("added_tokens") or [] if token["special"]}
    assert (one_token_mark(doc, line_rule(doc), special, pieces) is not None) == allowed
    assert one_token_mark(doc, line_rule(doc), set(), pieces) is None  # unknown not special


def test_a_word_of_one_unknown_character_is_asked():
    """A one-character word of a character the model lacks (its bytes' pieces, or one byte
    piece for an ASCII one) is asked, whatever the pieces."""
    engine = read_engine_files(KINDS["llama-bpe"]())
    words = ["▁", "\x01", "東"]
    assert engine.words_covered(words) == _asked(engine, words)


@pytest.mark.parametrize("lowercase", [True, False])
def test_a_bert_pipeline_asks_only_words_that_may_be_one_entry(lowercase):
    """Printable ASCII words: with punctuation and more, or not in the vocabulary (lowercased
    when the normalizer lowercases), are not covered, unasked; the rest are asked, and each
    printable ASCII word asked is one entry."""
    doc = json.loads(KINDS["bert-wordpiece"]()["tokenizer.json"])
    doc["normalizer"]["lowercase"] = lowercase
    engine = read_engine_files({"tokenizer.json": json.dumps(doc).encode()})
    mark, pieces, lower = engine._one_token
    assert mark is None and lower is lowercase
    words = _words(engine, 6) + ["The", "THE", "the", "don't", "U.S.A.", "'", "a-b", "~", "x" * 150,
                                 "Café", "東京", "\x7f", "ab\x01"]
    words = [word for word in dict.fromkeys(words) if word.split() == [word]]
    asked: list[str] = []
    found = covers(words, None, pieces, lambda texts: asked.extend(texts) or
                   engine.encode_ordinary_batch(texts), set(engine.special_ids.values()), lower)
    assert found == _asked(engine, words)
    assert "don't" not in asked and "Café" in asked and 0 < len(asked) < len(words)
    covered = {word for word, one in zip(words, found) if one}
    ascii_asked = [word for word in asked if word.isascii() and word.isprintable()]
    assert ascii_asked and set(ascii_asked) <= covered  # no printable ASCII word asked in vain
    assert ("THE" in asked) is lowercase
    assert engine.words_covered(words) == found


def test_the_bert_pipelines_that_allow_it():
    from tokenizers_app.engines.hf_words import ascii_rule

    bert = json.loads(KINDS["bert-wordpiece"]()["tokenizer.json"])
    pieces = {token["content"]: token["id"] for token in bert["added_tokens"]}
    special = set(pieces.values())
    assert ascii_rule(bert, special, pieces) is True
    assert ascii_rule({**bert, "normalizer": None}, special, pieces) is False
    assert ascii_rule({**bert, "normalizer": {"type": "Lowercase"}}, special, pieces) is None
    assert ascii_rule({**bert, "pre_tokenizer": {"type": "Whitespace"}}, special, pieces) is None
    assert ascii_rule(bert, special - {pieces["[UNK]"]}, pieces) is None
    llama = json.loads(KINDS["llama-bpe"]()["tokenizer.json"])
    assert ascii_rule(llama, special, pieces) is None
