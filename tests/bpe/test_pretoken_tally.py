"""Byte-level BPE's evaluation by one scan of the pre-tokens (``pretoken_tally``): the compiled
tally against its plain twin, attribute by attribute; the totals of a tally against those of
``PreTokenTotals`` (which encodes every occurrence); when the compiled tally applies and the
fallback when it does not; and the check that a pre-token's tokens spell it."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.bpe.corpora import SAMPLES, varied_text
from tests.bpe.reference import reference_evaluate
from tests.fixtures import gpt2_fixture_dir
from tokenizers_app.bpe import compiled, evaluation, load_tokenizer, train_bpe
from tokenizers_app.bpe.evaluation import document_pieces, evaluate, evaluate_totals
from tokenizers_app.bpe.pretoken_tally import PlainPreTokenTally, TallyTotals, compiled_tally
from tokenizers_app.bpe.pretoken_totals import PreTokenTotals
from tokenizers_app.bpe.pretokenize import character_classes

VARIED = (SAMPLES["english"][:600] + "\n\n" + SAMPLES["chinese"][:80] + "\n東京 🍕 café\u3000end"
          + "\n  two  spaces\t\ttabs   \n\n\nI'm don't you'll 'quoted' x2y 3.14 ...\n"
          + "Ｆｕｌｌ ﬁ e\u0301 \u00a0nbsp\u200bzero \ufeffbom 한국어 \U0001F468\u200d\U0001F469\n"
          + "\x01\x02\x1c \x1d\x1e ☃☃☃\r\n\r\n" + "ab" * 40 + "\nLast line, no newline"
          + "\n<|endoftext|> don't-stop x'y 'll 's \u2028sep\u0085 é́ " + "a" * 3000)
needs_compiled = pytest.mark.skipif(
    compiled.PreTokenTally is None, reason="the compiled loops were not built: pure path only")


@pytest.fixture(scope="module")
def gpt2():
    return load_tokenizer(gpt2_fixture_dir())


def tallied(tally, text: str, piece_chars: int = 300):
    for piece in document_pieces(text.splitlines(keepends=True), True, piece_chars):
        tally.add(piece)
    return (tally.pretokens, tally.ids, tally.counts(), tally.columns(), tally.joins(),
            tally.id_counts())


@needs_compiled
@pytest.mark.parametrize("text", [VARIED, varied_text(60_000, seed=7), "", " ", "\n\n"])
def test_the_compiled_tally_equals_its_plain_twin(gpt2, text):
    fast = tallied(compiled_tally(gpt2), text)
    assert fast == tallied(PlainPreTokenTally(gpt2), text)
    if len(text) > 100:
        assert fast[4]["joins"] > 0 and sum(fast[3]["cut"]) > 0 and sum(fast[3]["covered"]) > 0


@needs_compiled
def test_the_compiled_tally_equals_its_plain_twin_on_a_trained_tokenizer():
    tokenizer = train_bpe(["".join(SAMPLES.values())[:20_000]], 330,
                          special_tokens=["<|endoftext|>"]).tokenizer()
    assert tallied(compiled_tally(tokenizer), VARIED) == tallied(
        PlainPreTokenTally(tokenizer), VARIED)


@pytest.mark.parametrize("pattern", ["gpt2", "gpt4"])
def test_the_totals_of_a_tally_equal_those_of_every_occurrence_encoded(pattern, monkeypatch):
    tokenizer = train_bpe(["".join(SAMPLES.values())[:20_000]], 330, pattern=pattern).tokenizer()
    lines = VARIED.splitlines(keepends=True)
    chosen = evaluate_totals(tokenizer, lines)
    monkeypatch.setattr(evaluation, "compiled_tally", lambda tokenizer, **_: None)
    encoded = evaluate_totals(tokenizer, lines)  # PreTokenTotals
    monkeypatch.setattr(evaluation, "compiled_tally", lambda tokenizer, **_: PlainPreTokenTally(
        tokenizer))
    plain = evaluate_totals(tokenizer, lines)  # TallyTotals over the plain tally
    assert chosen.comparable() == encoded.comparable() == plain.comparable()
    assert chosen.counts["split_words"] > 0 and chosen.counts["tokens"] > 300


def test_the_fast_path_equals_the_reference_on_gpt2(gpt2):
    lines = (VARIED + varied_text(30_000, seed=3)).splitlines(keepends=True)
    fast, plain = evaluate(gpt2, lines), reference_evaluate(gpt2, lines)
    assert fast.pop("encode_throughput_mb_s") > 0
    plain.pop("encode_throughput_mb_s")
    assert fast == plain


def test_the_compiled_tally_applies_only_to_the_gpt2_scan_of_the_compiled_core(gpt2):
    gpt4 = train_bpe(["".join(SAMPLES.values())[:5_000]], 280, pattern="gpt4").tokenizer()
    assert compiled_tally(gpt4) is None  # a pattern the C scanner does not know
    if compiled.PreTokenTally is None:
        assert compiled_tally(gpt2) is None
    else:
        assert isinstance(compiled_tally(gpt2), compiled.PreTokenTally)


def test_evaluation_falls_back_to_encoding_every_occurrence(gpt2, monkeypatch):
    made = []
    monkeypatch.setattr(PreTokenTotals, "__init__", lambda self, tokenizer, init=PreTokenTotals
                        .__init__: made.append(tokenizer) or init(self, tokenizer))
    monkeypatch.setattr(evaluation, "compiled_tally", lambda tokenizer, **_: None)
    fallback = evaluate_totals(gpt2, VARIED.splitlines(keepends=True))
    assert made == [gpt2]
    monkeypatch.undo()
    assert fallback.comparable() == evaluate_totals(gpt2, VARIED.splitlines(keepends=True)
                                                    ).comparable()


@needs_compiled
def test_a_pre_token_whose_tokens_do_not_spell_it_is_refused(gpt2):
    vocab = dict(gpt2.vocab)
    vocab[gpt2._table.byte_ids[ord("a")]] = b"b"  # the token of byte "a" now spells "b"
    tally = compiled.PreTokenTally(gpt2._table, vocab, (), character_classes())
    tally.add("bcd")
    with pytest.raises(ValueError, match="do not spell the pre-token 'a'"):
        tally.add("x\ta")
    assert tally.pretokens == ["bcd", "x", "\t"] and tally.counts() == [1, 1, 1]


def test_tally_totals_time_the_tally_and_count_the_text(gpt2):
    totals = TallyTotals(gpt2, PlainPreTokenTally(gpt2))
    totals.add(["héllo world\n", "again\n"])
    assert totals.seconds > 0
    assert (totals.totals["bytes"], totals.totals["chars"]) == (19, 18)


@needs_compiled
@pytest.mark.parametrize("text", [VARIED, varied_text(60_000, seed=11), "", " ", "\n\n", "a",
                                  " a", "a ", "\x1c", "x\x1cy z\x1f", " 'll don't\r\n\t\x0bend",
                                  "\u3000\u3000日本\u2029", "a" * 3000 + " " + "b" * 2])
def test_the_compiled_tally_counts_the_words_str_split_finds(gpt2, text):
    """The words counted from the tally's scan (``count_words``) are ``str.split``'s, with
    their counts: those that are one pre-token (with or without its leading space) by the
    pre-token, the others (``don't``, ``3.14``, a word cut by U+001C) by their text."""
    tally = compiled_tally(gpt2, count_words=True)
    for piece in document_pieces(text.splitlines(keepends=True), True, 300):
        tally.add(piece)
    assert tally.words() == Counter(text.split())
    plain = compiled_tally(gpt2)  # without count_words, the rest is the same
    for piece in document_pieces(text.splitlines(keepends=True), True, 300):
        plain.add(piece)
    assert tallied(plain, "") == tallied(tally, "")


@needs_compiled
def test_an_evaluation_takes_its_words_from_the_tally(gpt2, monkeypatch):
    words = Counter()
    totals = evaluate_totals(gpt2, VARIED.splitlines(keepends=True), words)
    assert words == Counter(VARIED.split())
    monkeypatch.setattr(evaluation, "compiled_tally", lambda *args, **kwargs: None)
    counted = Counter()
    assert evaluate_totals(gpt2, VARIED.splitlines(keepends=True), counted).comparable() == \
        totals.comparable()
    assert counted == words
