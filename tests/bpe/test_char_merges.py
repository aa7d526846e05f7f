"""Character-level BPE's words merged in C for an evaluation (``char_merges``) against the
tokenizer's own ``_encode_word``; merges that are not consistent, and the pure core, fall back
to it."""

from __future__ import annotations

import pytest

from tests.bpe.corpora import SAMPLES, varied_text
from tests.bpe.reference import reference_evaluate
from tokenizers_app.bpe import compiled
from tokenizers_app.bpe.char_bpe import CharBPETokenizer, train_char_bpe
from tokenizers_app.bpe.char_merges import compiled_word_ids, consistent
from tokenizers_app.bpe.evaluation import evaluate
from tokenizers_app.bpe.totals import RunTotals

TRAINING = "".join(SAMPLES.values()) + varied_text(40_000, seed=5)
needs_compiled = pytest.mark.skipif(not compiled.IS_COMPILED,
                                    reason="the compiled loops were not built: pure path only")


def same_numbers(tokenizer, lines):
    fast, plain = evaluate(tokenizer, lines), reference_evaluate(tokenizer, lines)
    assert fast.pop("encode_throughput_mb_s") > 0
    plain.pop("encode_throughput_mb_s")
    assert fast == plain


def test_consistent_merges_make_a_token_before_any_pair_holds_it():
    assert consistent({(1, 2): 0, (3, 1): 1}, [3, 4])
    assert not consistent({(1, 2): 1, (3, 1): 0}, [4, 3])
    assert not consistent({(1, 2): 0, (5, 6): 1, (3, 1): 2}, [3, 9, 3])  # 3 made again at 2


@needs_compiled
@pytest.mark.parametrize("split", ["whitespace", "word_punct"])
def test_words_merged_in_c_equal_encode_word(split):
    tokenizer = train_char_bpe([TRAINING], 700, split=split).tokenizer()
    merge = compiled_word_ids(tokenizer)
    assert merge is not None
    words = list(dict.fromkeys(tokenizer.split_words(varied_text(30_000, seed=9))))
    words += ["a" * 200, "ab" * 90 + "\x00", "x", "東京🍕zz", "the" * 30]  # long: the heap path
    assert merge(words) == [tuple(tokenizer.bpe(word)) for word in words]
    assert merge(words[:3]) == [tokenizer._cache[word] for word in words[:3]]  # kept there
    assert any(len(ids) == 1 for ids in merge(words)) and len(words) > 1000


def test_inconsistent_merges_and_lowercasing_fall_back_to_encode_word():
    vocab = {0: "<unk>", 1: "a", 2: "b", 3: "c</w>", 4: "ab", 5: "abc</w>", 6: "b</w>"}
    late = CharBPETokenizer(vocab, [("ab", "c</w>"), ("a", "b")], ["<unk>"])  # 4 used, then made
    assert compiled_word_ids(late) is None and RunTotals(late).merge_words is None
    same_numbers(late, ["abc abc ab\n", "ab abc x\n"])
    lowered = train_char_bpe([TRAINING[:5000]], 100, lowercase=True).tokenizer()
    assert compiled_word_ids(lowered) is None
    if not compiled.IS_COMPILED:
        assert compiled_word_ids(CharBPETokenizer(vocab, [("a", "b")], ["<unk>"])) is None


def test_evaluation_with_words_merged_in_c_equals_the_reference():
    tokenizer = train_char_bpe([TRAINING], 500, split="word_punct").tokenizer()
    assert (RunTotals(tokenizer).merge_words is not None) == compiled.IS_COMPILED
    same_numbers(tokenizer, (TRAINING[:30_000] + "zzz" * 40 + " Ωmega\n").splitlines(True))
