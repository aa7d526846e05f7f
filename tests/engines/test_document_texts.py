"""An engine's documents found on whole stretches of text (``document_texts``) are the texts of
``evaluation.documents`` read line by line, and their batches ``evaluation.batches``', however
the text is cut into blocks and stretches: blank lines of ``\\n`` and ``\\r\\n`` (one cut between
its ``\\r`` and ``\\n``), the size rule, lines that do not end, other line breaks that are not
``\\n``."""

from __future__ import annotations

import random

import pytest

from tests.real_text import django_messages
from tokenizers_app.bpe.evaluation import LineCounter
from tokenizers_app.engines import document_texts as found
from tokenizers_app.engines.evaluation import DOCUMENT_CHARS, batches, documents

PIECES = ["\n", "\r", "\r\n", "a", "b c", "\n\n", "é", " ", "\x0b", "\u2028", "\x85"]


def _line_by_line(blocks: list[str], most: int) -> list[str]:
    return ["".join(doc) for doc in documents(LineCounter(blocks), most)]


@pytest.mark.parametrize("seed", range(4))
def test_random_text_cut_anywhere(seed, monkeypatch):
    rng = random.Random(seed)
    for _ in range(600):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randrange(0, 60)))
        cuts = sorted(rng.sample(range(len(text) + 1), min(len(text) + 1, rng.randrange(0, 6))))
        blocks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]
        most = rng.choice([1, 2, 3, 5, 8, 1000])
        monkeypatch.setattr(found, "STRETCH_CHARS", rng.choice([1, 3, 10, 1 << 16]))
        texts = list(found.document_texts(blocks, most))
        assert texts == _line_by_line(blocks, most), (blocks, most)
        size = rng.choice([1, 5, 20])
        assert list(found.text_batches(texts, size)) == [
            ["".join(doc) for doc in batch]
            for batch in batches(documents(LineCounter(blocks), most), size)]
        lines = LineCounter(blocks)
        assert found.line_count("".join(texts)) == sum(1 for _ in lines) == lines.count


def test_real_text_read_a_line_at_a_time_and_in_blocks():
    text = django_messages("multi")[:400_000]
    paragraphs = text.replace("\n", "\n\n", 40).replace("\n\n\n", "\n\r\n\n")
    lines = paragraphs.splitlines(keepends=True)
    blocks = [paragraphs[k:k + 70_001] for k in range(0, len(paragraphs), 70_001)]
    for most in (DOCUMENT_CHARS, 5_000):
        want = _line_by_line(lines, most)
        assert len(want) > 40 and list(found.document_texts(lines, most)) == want
        assert list(found.document_texts(blocks, most)) == want
