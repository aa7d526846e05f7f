from collections import Counter

import pytest

from tests.bpe.corpora import SAMPLES, varied_text
from tokenizers_app.bpe import counting
from tokenizers_app.bpe.counting import count_chunk, count_range, plan_ranges
from tokenizers_app.bpe.pretokenize import PreTokenizer

SPECIALS = ["<|endoftext|>"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    text = varied_text(300_000, seed=7)
    text = "<|endoftext|>".join(text[i:i + 9000] for i in range(0, len(text), 9000))
    path = tmp_path_factory.mktemp("corpus") / "corpus.txt"
    path.write_text(text, encoding="utf-8")
    return path, text


@pytest.mark.parametrize("pattern", ["gpt2", "gpt4", "none", r"\w+|\s+|[^\w\s]+"])
def test_ranges_count_exactly_like_the_whole_file(corpus, pattern):
    path, text = corpus
    ranges = plan_ranges(path, pattern, SPECIALS, range_bytes=5000)
    assert ranges[0][0] == 0 and ranges[-1][1] == len(text.encode())
    assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))
    assert len(ranges) > 10
    total, ticked, ticks = Counter(), Counter(), []
    for start, end in ranges:
        total.update(count_range(path, start, end, pattern, SPECIALS))
        ticked.update(count_range(path, start, end, pattern, SPECIALS,
                                  lambda done, all_chars: ticks.append((done, all_chars))))
    assert total == ticked == count_chunk(text, PreTokenizer(pattern), SPECIALS)
    assert ticks and all(0 < done <= all_chars for done, all_chars in ticks)


def test_line_cuts_make_ranges_without_special_tokens(tmp_path):
    path = tmp_path / "lines.txt"
    text = "".join(SAMPLES.values()) * 20
    path.write_text(text, encoding="utf-8")
    ranges = plan_ranges(path, "gpt2", [], range_bytes=3000)
    assert len(ranges) > 5
    total = Counter()
    for start, end in ranges:
        total.update(count_range(path, start, end, "gpt2", []))
    assert total == count_chunk(text, PreTokenizer("gpt2"), [])


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_parallel_counting_in_processes_equals_one_process(corpus, monkeypatch, method):
    path, text = corpus
    monkeypatch.setattr(counting, "RANGE_BYTES", 20_000)
    monkeypatch.setattr(counting, "pool_start_method", lambda: method)
    done = []
    parallel = counting.count_file_parallel(path, "gpt2", SPECIALS, 2, done.append)
    expected = count_chunk(text, PreTokenizer("gpt2"), SPECIALS)
    assert parallel == {word.encode(): count for word, count in expected.items()}
    assert len(done) > 4 and sum(done) == len(text.encode())


def test_workers_fork_only_where_no_other_thread_runs(monkeypatch):
    monkeypatch.setattr(counting.threading, "active_count", lambda: 1)
    assert counting.pool_start_method() == "fork"
    monkeypatch.setattr(counting.threading, "active_count", lambda: 2)
    assert counting.pool_start_method() == "spawn"


def test_a_bad_byte_in_a_range_names_its_file_offset(tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"x" * 100 + b"\xfe" + b"y" * 10)
    with pytest.raises(ValueError, match="byte offset 100"):
        count_range(path, 50, 111, "gpt2", [])


def test_a_self_overlapping_special_token_is_never_cut_through(tmp_path):
    path = tmp_path / "aaa.txt"
    text = "b" + "a" * 40_001 + "x\n" + "word\nword\n" * 3000
    path.write_text(text, encoding="utf-8")
    for pattern in ("gpt2", "none"):
        ranges = plan_ranges(path, pattern, ["aa"], range_bytes=7_000)
        total = Counter()
        for start, end in ranges:
            total.update(count_range(path, start, end, pattern, ["aa"]))
        assert total == count_chunk(text, PreTokenizer(pattern), ["aa"]), pattern


def test_a_long_text_without_safe_cuts_is_counted_in_batches_that_tick(monkeypatch):
    monkeypatch.setattr(counting, "TICK_CHARS", 100)
    text = "some words and more words " * 2000
    ticks = []
    pretokenizer = PreTokenizer(r"\w+|\s+")
    counts = count_chunk(text, pretokenizer, [], tick=lambda: ticks.append(1))
    assert counts == Counter(pretokenizer.split(text))
    assert len(ticks) >= 1
