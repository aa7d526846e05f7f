import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.bpe.corpora import SAMPLES
from tests.bpe.reference import reference_train
from tokenizers_app.bpe import Tokenizer, TrainingCancelled, train_bpe
from tokenizers_app.bpe.parameters import check_sweep
from tokenizers_app.bpe.pretokenize import PreTokenizer
from tokenizers_app.bpe.training import (
    Ticker,
    count_pretokens,
    has_standard_layout,
    prefix_tokenizer,
    train_from_counts,
)
from tokenizers_app.errors import Invalid

PATTERNS = ["gpt2", "gpt4", "none", r"\w+|\s+|[^\w\s]+"]
SPECIALS = [[], ["<|endoftext|>", "<|pad|>"]]


def _with_specials(text: str, specials: list[str]) -> list[str]:
    if not specials:
        return [text]
    middle = len(text) // 2
    return [text[:middle] + specials[0] + text[middle:] + specials[-1] + "tail " + text[:40]]


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("specials", SPECIALS, ids=["plain", "specials"])
@pytest.mark.parametrize("sample", list(SAMPLES))
def test_training_equals_the_reference_trainer(sample, pattern, specials):
    texts = _with_specials(SAMPLES[sample], specials)
    vocab_size = 256 + len(specials) + 120
    expected_vocab, expected_merges, expected_counts = reference_train(
        texts, vocab_size, specials, pattern)
    result = train_bpe(texts, vocab_size, special_tokens=specials, pattern=pattern)
    assert result.merges == expected_merges
    assert result.merge_counts == expected_counts
    assert result.vocab == expected_vocab


def test_training_on_all_samples_at_once_equals_the_reference():
    texts = list(SAMPLES.values())
    expected = reference_train(texts, 256 + 400, ["<s>"], "gpt2")
    result = train_bpe(texts, 256 + 400, special_tokens=["<s>"])
    assert (result.vocab, result.merges, result.merge_counts) == expected


def test_min_frequency_stops_early():
    texts = [SAMPLES["english"]]
    expected_vocab, expected_merges, expected_counts = reference_train(
        texts, 2000, (), "gpt2", min_frequency=5)
    result = train_bpe(texts, 2000, min_frequency=5)
    assert result.merges == expected_merges
    assert min(result.merge_counts) >= 5
    assert len(result.vocab) < 2000


def test_merging_stops_when_no_pair_is_left():
    result = train_bpe(["ab ab"], vocab_size=1000)
    assert result.merges == [(b"a", b"b"), (b" ", b"ab")]
    assert len(result.vocab) == 258


def test_special_tokens_are_never_merged_across_or_into():
    result = train_bpe(["ab<|e|>ab<|e|>ab<|e|>"], 300, special_tokens=["<|e|>"])
    assert result.merges == [(b"a", b"b")]
    assert result.merge_counts == [3]
    assert result.vocab[0] == b"<|e|>"


def test_the_id_layout_is_specials_then_bytes_then_merges():
    result = train_bpe(["hello hello"], 262, special_tokens=["<a>", "<b>"])
    assert result.vocab[0] == b"<a>" and result.vocab[1] == b"<b>"
    assert [result.vocab[2 + b] for b in range(256)] == [bytes([b]) for b in range(256)]
    assert result.vocab[258] == b"".join(result.merges[0])


def test_a_file_and_a_string_train_alike(tmp_path):
    text = "\n".join(SAMPLES.values())
    path = tmp_path / "corpus.txt"
    path.write_text(text, encoding="utf-8")
    from_file = train_bpe(path, 600)
    from_text = train_bpe([text], 600)
    assert from_file.merges == from_text.merges
    assert from_file.merge_counts == from_text.merge_counts


def test_several_paths_are_separate_documents(tmp_path):
    (tmp_path / "a.txt").write_text("ab", encoding="utf-8")
    (tmp_path / "b.txt").write_text("ab", encoding="utf-8")
    result = train_bpe([tmp_path / "a.txt", tmp_path / "b.txt"], 300)
    assert result.merges == [(b"a", b"b")] and result.merge_counts == [2]


def test_progress_is_reported_for_each_stage():
    seen = []
    train_bpe([SAMPLES["english"]], 400, progress=lambda *args: seen.append(args))
    stages = [stage for stage, _done, _total in seen]
    assert "count" in stages and "merge" in stages
    assert seen[-1][0] == "merge" and seen[-1][1] == seen[-1][2]


def test_should_stop_cancels_training():
    with pytest.raises(TrainingCancelled):
        train_bpe([SAMPLES["english"]], 400, should_stop=lambda: True)


@pytest.mark.parametrize("vocab_size, specials, message, field", [
    (255, [], "vocab size 255 is out of bounds: .* from 256", "vocab_size"),
    (257, ["<a>", "<b>"], r"from 258 \(256 bytes \+ 2 special tokens\)", "vocab_size"),
    ("300", [], "must be an integer", "vocab_size"),
    (300, [""], "non-empty", "special_tokens"),
    (300, ["<a>", "<a>"], "listed twice", "special_tokens"),
])
def test_bad_parameters_raise_value_errors_that_name_the_problem(vocab_size, specials, message,
                                                                 field):
    with pytest.raises(Invalid, match=message) as raised:
        train_bpe(["some text"], vocab_size, special_tokens=specials)
    assert isinstance(raised.value, ValueError) and raised.value.field == field


def test_a_pattern_that_does_not_compile_is_rejected():
    with pytest.raises(Invalid, match="does not compile") as raised:
        train_bpe(["some text"], 300, pattern="(unclosed")
    assert raised.value.field == "pattern"


def test_a_min_frequency_below_one_is_refused_before_counting():
    with pytest.raises(Invalid, match="min frequency must be an integer >= 1, got 0") as raised:
        train_bpe(["some text"], 300, min_frequency=0)
    assert raised.value.field == "min_frequency"


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("specials", SPECIALS)
def test_training_from_counts_ends_as_training_from_text(pattern, specials):
    """The fan-out counts in parts and ends with ``train_from_counts``: counted in one piece or
    not, the same counts give the same merges, counts and vocab."""
    texts = list(SAMPLES.values())
    counts = count_pretokens(texts, PreTokenizer(pattern), specials, Ticker(None, None), 1)
    from_counts = train_from_counts(counts, 400, specials, pattern, 2)
    assert from_counts == train_bpe(texts, 400, specials, pattern, 2, workers=1)


def test_training_from_counts_refuses_no_counts_and_bad_parameters():
    with pytest.raises(ValueError, match="the corpus is empty"):
        train_from_counts({}, 300)
    with pytest.raises(Invalid, match="vocab size 299 is out of bounds") as raised:
        train_from_counts({b"ab": 2}, 299, [f"<{i}>" for i in range(44)])
    assert raised.value.field == "vocab_size"


def test_a_pattern_that_is_not_lossless_is_rejected():
    with pytest.raises(ValueError, match="not lossless"):
        train_bpe(["some text"], 300, pattern=r"\w+")


def test_an_empty_corpus_is_rejected(tmp_path):
    (tmp_path / "empty.txt").write_bytes(b"")
    with pytest.raises(ValueError, match="empty"):
        train_bpe(tmp_path / "empty.txt", 300)
    with pytest.raises(ValueError, match="empty"):
        train_bpe(["<|e|>"], 300, special_tokens=["<|e|>"])


def test_a_non_utf8_file_names_the_byte_offset(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes("héllo wörld ".encode() * 3 + b"\xff rest")
    with pytest.raises(ValueError, match=r"byte offset 42\b"):
        train_bpe(path, 300)


def test_a_non_utf8_byte_across_a_block_boundary_names_the_byte_offset(tmp_path):
    from tokenizers_app.bpe.corpus import read_blocks

    path = tmp_path / "bad.txt"
    path.write_bytes(b"ab\xc3" + b"(" + b"cd")  # a truncated two-byte sequence
    with pytest.raises(ValueError, match=r"byte offset 2\b"):
        list(read_blocks(path, block_bytes=3))


def test_a_missing_file_is_a_value_error(tmp_path):
    with pytest.raises(ValueError, match="cannot read corpus file"):
        train_bpe(tmp_path / "nope.txt", 300)


def _train_in_subprocess(seed: str, corpus: Path) -> bytes:
    code = (
        "import sys; from tokenizers_app.bpe import train_bpe, save_tokenizer;"
        "r = train_bpe([__import__('pathlib').Path(sys.argv[1])], 700, ['<|endoftext|>']);"
        "save_tokenizer(r.tokenizer(), sys.argv[2], 'native')"
    )
    out = corpus.parent / f"out-{seed}.json"
    env = dict(os.environ, PYTHONHASHSEED=seed)
    subprocess.run([sys.executable, "-c", code, str(corpus), str(out)], check=True, env=env,
                   cwd=Path(__file__).resolve().parents[2])
    return out.read_bytes()


def test_training_is_deterministic_across_hash_seeds(tmp_path):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("<|endoftext|>".join(SAMPLES.values()), encoding="utf-8")
    first, second = _train_in_subprocess("1", corpus), _train_in_subprocess("2", corpus)
    assert first == second
    assert b"merges" in first


@pytest.mark.parametrize("pattern", ["gpt2", "gpt4"])
def test_training_equals_the_reference_on_a_larger_varied_text(pattern):
    from tests.bpe.corpora import varied_text

    text = varied_text(120_000, seed=11)
    texts = [text[i:i + 30_000] for i in range(0, len(text), 30_000)]
    expected = reference_train(texts, 256 + 1 + 250, ["<|endoftext|>"], pattern)
    result = train_bpe(texts, 256 + 1 + 250, special_tokens=["<|endoftext|>"], pattern=pattern)
    assert (result.vocab, result.merges, result.merge_counts) == expected


def test_files_counted_in_processes_train_like_one_process(tmp_path, monkeypatch):
    """Two files large enough for the worker processes, and a text counted here: the counts
    of both kinds add up to those of one process."""
    from tests.bpe.corpora import varied_text
    from tokenizers_app.bpe import counting

    monkeypatch.setattr(counting, "RANGE_BYTES", 20_000)
    paths = []
    for seed in (3, 4):
        paths.append(tmp_path / f"part{seed}.txt")
        paths[-1].write_text(varied_text(120_000, seed=seed), encoding="utf-8")
    source = [paths[0], "a text counted in this process, " * 50, paths[1]]
    parallel = train_bpe(source, 256 + 300, workers=2)
    alone = train_bpe(source, 256 + 300, workers=1)
    assert (parallel.merges, parallel.merge_counts) == (alone.merges, alone.merge_counts)


def test_a_trained_tokenizer_has_the_standard_layout_and_a_renumbered_one_not():
    tokenizer = train_bpe(list(SAMPLES.values()), 300, special_tokens=["<s>"]).tokenizer()
    assert has_standard_layout(tokenizer)
    size = len(tokenizer.vocab)
    moved = {(i - 1) % size: token for i, token in tokenizer.vocab.items()}  # <s> last
    assert not has_standard_layout(Tokenizer(moved, tokenizer.merges, ["<s>"]))


def test_a_prefix_of_the_merges_is_what_training_to_that_size_gives():
    texts = list(SAMPLES.values())
    full = train_bpe(texts, 500, special_tokens=["<s>"]).tokenizer()
    prefix = prefix_tokenizer(full, 400)
    smaller = train_bpe(texts, 400, special_tokens=["<s>"])
    assert (prefix.vocab, prefix.merges, prefix.merge_counts) == (
        smaller.vocab, smaller.merges, smaller.merge_counts)
    assert check_sweep([400, 300, 400], 500, 1) == [300, 400]


def test_a_pre_token_over_the_limit_is_refused_before_merging(tmp_path):
    corpus = tmp_path / "one-line.txt"
    corpus.write_text("ab " * 400 + "\nshort line\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"a pre-token of 1,212 bytes, over the limit of "
                                         r"1,000 \(MAX_PRETOKEN_BYTES\): pattern 'none' makes"):
        train_bpe(corpus, 300, pattern="none", workers=1, max_pretoken_bytes=1000)
    train_bpe(corpus, 300, pattern="gpt2", workers=1, max_pretoken_bytes=1000)  # split: fine
