"""The compiled loops (``training_loop_compiled``, ``encoding_loop_compiled``) against their
pure-Python twins: the same merges, counts and ids on random and real text, the same artifacts
byte for byte, and the switch (``compiled``, ``BPE_PURE_PYTHON=1``) that picks one of them."""

import os
import subprocess
import sys
from array import array
from collections import Counter
from itertools import chain
from pathlib import Path

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.bpe.corpora import SAMPLES, varied_text
from tests.bpe.reference import reference_words
from tests.fixtures import gpt2_fixture_dir
from tokenizers_app.bpe import Tokenizer, compiled, encoding_loop, load_tokenizer, train_bpe
from tokenizers_app.bpe import training_loop
from tokenizers_app.bpe.pretokenize import GPT2_PATTERN, PreTokenizer, character_classes
from tokenizers_app.bpe.words import FlatWords

fast_training = pytest.importorskip(
    "tokenizers_app.bpe.training_loop_compiled",
    reason="the compiled loops were not built (no C compiler at install): pure path only")
fast_encoding = pytest.importorskip("tokenizers_app.bpe.encoding_loop_compiled")

REPO = Path(__file__).resolve().parents[2]
SPECIALS = ["<|endoftext|>", "<pad>", "<|end|>"]


def both_learn(word_counts, num_merges, min_frequency=1, alphabet=None):
    pure = training_loop.learn_merges(word_counts, num_merges, min_frequency, alphabet=alphabet)
    fast = fast_training.learn_merges(word_counts, num_merges, min_frequency, alphabet=alphabet)
    return pure, fast


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.binary(min_size=1, max_size=12), st.integers(1, 50), max_size=40),
       st.integers(0, 80), st.integers(1, 4))
def test_both_loops_learn_the_same_merges_and_counts_on_random_words(words, merges, floor):
    pure, fast = both_learn(words, merges, floor)
    assert fast == pure


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(b"ab\x00\xff"), min_size=1, max_size=30).map(bytes),
       st.integers(1, 1000))
def test_both_loops_agree_on_runs_of_few_symbols(word, count):
    """Overlapping pairs (``aaaa``) and ties everywhere."""
    pure, fast = both_learn({word: count, word[::-1] + b"a": 1}, 40)
    assert fast == pure


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.lists(st.integers(0, 5), min_size=1, max_size=10).map(tuple),
                       st.integers(1, 9), max_size=20))
def test_both_loops_agree_on_character_level_words(words):
    alphabet = [b"a", b"a</w>", "\u00e9".encode(), b"b", b"\xff", b"ab"]  # b"ab": a duplicate
    pure, fast = both_learn(words, 30, alphabet=alphabet)
    assert fast == pure


def test_both_loops_agree_on_real_text():
    text = varied_text(300_000)
    words = reference_words([text], SPECIALS, "gpt2")
    pure, fast = both_learn(words, 3000)
    assert len(pure[0]) == 3000 and fast == pure


def test_the_compiled_loop_refuses_symbols_outside_the_alphabet():
    with pytest.raises(ValueError, match="symbol 2"):
        fast_training.learn_merges({(0, 2): 1}, 1, alphabet=[b"a", b"b"])
    with pytest.raises(ValueError, match="symbol -1"):  # checked in every word, not the first
        fast_training.learn_merges({(0, 1): 1, (1, 0, -1): 2}, 1, alphabet=[b"a", b"b"])
    with pytest.raises(ValueError, match="symbol -1"):
        training_loop.learn_merges({(0, 1): 1, (1, 0, -1): 2}, 1, alphabet=[b"a", b"b"])


def flat(words: dict) -> FlatWords:
    """The same words laid end to end."""
    return FlatWords(array("i", chain.from_iterable(words)),
                                   array("i", map(len, words)), list(words.values()))


@settings(max_examples=100, deadline=None)
@given(st.dictionaries(st.lists(st.integers(0, 5), min_size=1, max_size=10).map(tuple),
                       st.integers(1, 9), max_size=20))
def test_both_loops_learn_the_same_from_flat_words_as_from_tuples(words):
    alphabet = [b"a", b"a</w>", "\u00e9".encode(), b"b", b"\xff", b"ab"]
    pure, fast = both_learn(flat(words), 30, alphabet=alphabet)
    assert fast == pure == training_loop.learn_merges(words, 30, alphabet=alphabet)


@pytest.mark.parametrize("learn", [training_loop.learn_merges, fast_training.learn_merges])
def test_both_loops_refuse_flat_words_whose_parts_disagree(learn):
    symbols = array("i", [0, 1, 1])
    for words in (FlatWords(symbols, array("i", [2, 2]), [1, 1]),
                  FlatWords(symbols, array("i", [2, 1]), [1]),
                  FlatWords(symbols, array("i", [4, -1]), [1, 1])):
        with pytest.raises(ValueError, match="must agree"):
            learn(words, 3, alphabet=[b"a", b"b"])
    with pytest.raises(ValueError, match="symbol 2"):
        learn(FlatWords(array("i", [0, 2]), array("i", [2]), [1]), 3,
              alphabet=[b"a", b"b"])


def test_the_compiled_loop_reports_progress_and_stops_when_told():
    calls = []

    class Stop(Exception):
        pass

    def ticker(stage, done, total, force=False):
        calls.append((stage, done, total))
        if done >= 5:
            raise Stop

    with pytest.raises(Stop):
        fast_training.learn_merges({b"abcdefgh" * 4: 3}, 20, ticker=ticker)
    assert calls[0] == ("merge", 0, 20) and calls[-1] == ("merge", 5, 20)


@pytest.fixture(scope="module")
def tokenizers():
    trained = train_bpe([varied_text(200_000)], 256 + len(SPECIALS) + 1500, SPECIALS)
    return [trained.tokenizer(), load_tokenizer(gpt2_fixture_dir())]


@pytest.fixture(scope="module")
def twins(tokenizers):
    """(pure, compiled) twins of each tokenizer."""
    return [(pure_twin(tokenizer), fast_twin(tokenizer)) for tokenizer in tokenizers]


def pure_twin(tokenizer: Tokenizer) -> Tokenizer:
    """The same tokenizer running the pure merge table."""
    twin = Tokenizer(tokenizer.vocab, tokenizer.merges, tokenizer.special_ids,
                     tokenizer.pattern)
    table = tokenizer._table
    twin._table = encoding_loop.MergeTable(table.ranks, table.merged, table.byte_ids)
    return twin


def fast_twin(tokenizer: Tokenizer) -> Tokenizer:
    twin = pure_twin(tokenizer)
    table = tokenizer._table
    twin._table = fast_encoding.MergeTable(table.ranks, table.merged, table.byte_ids)
    return twin


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.text(max_size=60), st.sampled_from(SPECIALS + ["<|endo", "\n\n"])),
                max_size=8).map("".join))
def test_both_encoders_give_the_same_ids_special_tokens_included(twins, text):
    for pure, fast in twins:
        assert fast.encode(text, allowed_special="all") == pure.encode(text, allowed_special="all")
        assert fast.encode_ordinary(text) == pure.encode_ordinary(text)


def test_both_encoders_give_the_same_ids_on_real_and_long_text(tokenizers):
    text = varied_text(400_000) + "ab" * 20_000 + "\u00e9" * 5000
    for tokenizer in tokenizers:
        pretokens = list({p.encode() for p in PreTokenizer(tokenizer.pattern).split(text)})
        table = tokenizer._table
        pure = encoding_loop.MergeTable(table.ranks, table.merged, table.byte_ids)
        fast = fast_encoding.MergeTable(table.ranks, table.merged, table.byte_ids)
        assert fast.bpe_many(pretokens) == pure.bpe_many(pretokens)
        ids, lengths = fast.bpe_flat(pretokens)
        assert (ids, lengths) == pure.bpe_flat(pretokens)
        assert list(lengths) == list(map(len, pure.bpe_many(pretokens)))


def test_sparse_ids_encode_alike():
    trained = train_bpe(list(SAMPLES.values()), 256 + 300)
    sparse = Tokenizer({1000 * i + 7: token for i, token in trained.vocab.items()},
                       trained.merges)
    text = "".join(SAMPLES.values())
    assert fast_twin(sparse).encode_ordinary(text) == pure_twin(sparse).encode_ordinary(text)


def run_core(args: list[str], pure: bool, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "BPE_PURE_PYTHON"}
    if pure:
        env["BPE_PURE_PYTHON"] = "1"
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True,
                          text=True, check=True)


@pytest.mark.parametrize("algorithm,fmt", [("byte_bpe", "native"), ("byte_bpe", "hf"),
                                           ("char_bpe", "native")])
def test_both_paths_write_byte_identical_artifacts(tmp_path, algorithm, fmt):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(varied_text(150_000) + "<|endoftext|>" + SAMPLES["english"],
                      encoding="utf-8")
    outputs = []
    for pure in (True, False):
        out = tmp_path / f"{algorithm}-{pure}.{fmt}"
        run_core(["-m", "tokenizers_app.bpe", "train", "--input", str(corpus), "--vocab-size",
                  "1200", "--algorithm", algorithm, "--special-token", "<|endoftext|>",
                  "--out", str(out), "--format", fmt], pure, REPO)
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1] and len(outputs[0]) > 1000


PROBE = ("from tokenizers_app.bpe import compiled, training, tokenizer;"
         "print(compiled.CORE_PATH);"
         "print(training.learn_merges.__module__, tokenizer.MergeTable.__module__)")


def test_the_switch_forces_the_pure_loops():
    lines = run_core(["-c", PROBE], pure=True, cwd=REPO).stdout.splitlines()
    assert lines == ["pure Python (BPE_PURE_PYTHON=1)",
                     "tokenizers_app.bpe.training_loop tokenizers_app.bpe.encoding_loop"]


def test_without_the_switch_the_compiled_loops_run():
    lines = run_core(["-c", PROBE], pure=False, cwd=REPO).stdout.splitlines()
    assert lines == ["compiled (Cython)", "tokenizers_app.bpe.training_loop_compiled "
                                          "tokenizers_app.bpe.encoding_loop_compiled"]


def test_this_process_reports_the_path_it_runs():
    pure = os.environ.get("BPE_PURE_PYTHON") == "1"
    assert compiled.IS_COMPILED is not pure
    assert compiled.CORE_PATH.startswith("pure Python" if pure else "compiled")
    counts = Counter(PreTokenizer("gpt2").split(SAMPLES["english"]))
    words = {word.encode(): count for word, count in counts.items()}
    assert compiled.learn_merges(words, 50) == training_loop.learn_merges(words, 50)


GPT2 = regex.compile(GPT2_PATTERN)
PIECES = ["'", "s", "t", "re", "ve", "ll", "m", "d", "'S", " ", "  ", "\n", "\r\n", "\t", "\xa0",
          "\u3000", "a", "Z", "\u00e9", "1", "\u0663", "\u2167", "!", "?!", "\U0001F600",
          "\U00010400", "\U0001D7CE", "\ud800", "\u200b", "_", "x"]


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(PIECES), st.characters()), max_size=16).map("".join))
def test_the_compiled_gpt2_scanner_splits_as_regex_does(text):
    assert fast_encoding.gpt2_split(text, character_classes()) == GPT2.findall(text)


def test_the_compiled_gpt2_scanner_agrees_on_every_code_point_and_real_text():
    classes = character_classes()
    for code in range(0x110000):
        c = chr(code)
        text = f"{c} {c}'{c}  {c}{c}\n{c}"
        assert fast_encoding.gpt2_split(text, classes) == GPT2.findall(text), hex(code)
    text = varied_text(300_000)
    assert fast_encoding.gpt2_split(text, classes) == GPT2.findall(text)


def test_the_one_pass_encoder_keeps_its_cache_within_its_size(tokenizers):
    tokenizer = tokenizers[1]
    table = fast_twin(tokenizer)._table
    text = varied_text(100_000)
    cache: dict = {}
    ids = table.encode_gpt2(text, cache, 300, character_classes())
    assert ids == pure_twin(tokenizer).encode_ordinary(text) and 0 < len(cache) <= 300
    assert table.encode_gpt2("", cache, 300, character_classes()) == []


def test_the_twins_share_one_threshold_for_long_pretokens():
    """The compiled loop reads ``LONG_PRETOKEN`` from the pure one (a build that defined its own
    would not match), and both give the same ids on either side of it."""
    threshold = encoding_loop.LONG_PRETOKEN
    assert fast_encoding.LONG_PRETOKEN == threshold
    tokenizer = train_bpe([SAMPLES["english"]], 400).tokenizer()
    table = tokenizer._table
    pure = encoding_loop.MergeTable(table.ranks, table.merged, table.byte_ids)
    fast = fast_encoding.MergeTable(table.ranks, table.merged, table.byte_ids)
    pretokens = [b"th" * (n // 2) + b"e" * (n % 2) for n in range(threshold - 3, threshold + 4)]
    assert fast.bpe_many(pretokens) == pure.bpe_many(pretokens)
