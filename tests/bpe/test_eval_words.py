"""Distinct words across parts, merged from sorted word files (``bpe.eval_words``): the same as
the union of the parts' words held in memory, however the words fall into parts."""

import io
import random

import pytest

from tokenizers_app.bpe.eval_totals import EvalTotals
from tokenizers_app.bpe.eval_words import (
    distinct_words,
    read_word_lines,
    sorted_words,
    word_lines,
)

WORDS = ["the", " the", "The", "\n", "東京", "🍕", 'say "hi"', "a\tb", "\\", "ß", "z"]


def part(words: list[str]) -> dict[str, list]:
    totals = EvalTotals()
    for word in words:
        totals.add_word(word, 1, len(word) <= 3)
    return totals.words


@pytest.mark.parametrize("seed", range(5))
def test_words_merged_from_files_count_each_distinct_word_once(seed):
    rng = random.Random(seed)
    parts = [part(rng.sample(WORDS, rng.randint(0, len(WORDS)))) for _ in range(4)]
    files = [io.BytesIO(b"".join(word_lines(words))) for words in parts]
    held = EvalTotals()
    for words in parts:
        held.words.update({word: list(value) for word, value in words.items()})
    expected = (len(held.words), sum(1 for _, covered in held.words.values() if covered))
    assert distinct_words(read_word_lines(f) for f in files) == expected
    assert distinct_words(sorted_words(words) for words in parts) == expected


def test_a_words_file_reads_back_as_written():
    words = part(WORDS)
    lines = list(read_word_lines(io.BytesIO(b"".join(word_lines(words)))))
    assert lines == list(sorted_words(words))
    assert [word for word, _, _ in lines] == sorted(WORDS)


def test_merged_totals_count_distinct_words_from_the_override():
    from tokenizers_app.bpe.baselines import ByteTokenizer

    totals = EvalTotals()
    totals.counts.update(bytes=10, chars=10, tokens=10, words=3, own_words=3)
    totals.distinct = (3, 2)
    metrics = totals.metrics(ByteTokenizer())
    assert metrics["word_coverage_distinct"] == pytest.approx(2 / 3)
