"""Evaluation is true to the digit: the stored numbers are those of encoding the whole text with
the tokenizer's own library (tiktoken for GPT-2, Hugging Face ``tokenizers`` for character-level
BPE), and streaming the text in pieces gives the counts of the whole text for every kind."""

import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.bpe.corpora import SAMPLES, varied_text
from tests.bpe.test_tokenizer import tiktoken_gpt2, gpt2_dir  # noqa: F401 (fixtures)
from tokenizers_app.bpe import dumps_tokenizer, load_tokenizer, train_bpe, train_char_bpe
from tokenizers_app.bpe.corpus import read_lines
from tests.bpe.reference import reference_evaluate
from tokenizers_app.bpe import evaluation
from tokenizers_app.bpe.eval_totals import BYTE_LEVEL_LINES, cut_allowed
from tokenizers_app.bpe.evaluation import BlockPieces, LineCounter, document_pieces, evaluate
from tokenizers_app.bpe.metric_text import metric_number

# blank-line runs, indented code and trailing spaces: where encoding line by line drifts
CORPUS = ("".join(SAMPLES.values()) + varied_text(60_000, seed=3) +
          "def f(x):\n\n\n    return x  \n\n" * 40 + "The end.\n\n\n")
SHOWN = ("compression_ratio", "chars_per_token", "tokens_per_word")


def whole_text_numbers(text: str, tokens: int) -> dict[str, float]:
    return {"compression_ratio": len(text.encode()) / tokens, "chars_per_token": len(text) / tokens,
            "tokens_per_word": tokens / len(text.split())}


def evaluate_file(tokenizer, text: str) -> dict:
    """As the evaluation task does: the corpus file's lines, read back from disk."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "corpus.txt"
        path.write_bytes(text.encode())
        return evaluate(tokenizer, read_lines(path, 1 << 30))


def test_gpt2_numbers_equal_tiktoken_on_the_whole_text_to_every_digit(gpt2_dir,  # noqa: F811
                                                                      tiktoken_gpt2):  # noqa: F811
    peer_tokens = len(tiktoken_gpt2.encode_ordinary(CORPUS))
    line_by_line = sum(len(tiktoken_gpt2.encode_ordinary(line))
                       for line in CORPUS.splitlines(keepends=True))
    assert line_by_line > peer_tokens  # "\n\n" is one token: cutting at lines would drift
    stored = evaluate_file(load_tokenizer(gpt2_dir), CORPUS)
    peer = whole_text_numbers(CORPUS, peer_tokens)
    assert stored["tokens"] == peer_tokens
    for name in SHOWN:
        assert stored[name] == peer[name]
        assert metric_number(stored[name], name) == metric_number(peer[name], name)


def test_character_level_bpe_numbers_equal_hugging_face_on_the_whole_text():
    hf = pytest.importorskip("tokenizers")
    ours = train_char_bpe([CORPUS], vocab_size=400).tokenizer()
    peer = hf.Tokenizer.from_str(dumps_tokenizer(ours, "hf")["tokenizer.json"].decode())
    peer_tokens = len(peer.encode(CORPUS, add_special_tokens=False).ids)
    stored = evaluate_file(ours, CORPUS)
    assert stored["tokens"] == peer_tokens
    for name, value in whole_text_numbers(CORPUS, peer_tokens).items():
        assert stored[name] == value


def test_a_document_is_cut_only_after_a_lone_newline_between_non_space_characters():
    lines = ["a\n", "\n", "b\n", "c \n", "d\n", "e"]
    assert list(document_pieces(lines, True, 1)) == ["a\n\nb\n", "c \nd\n", "e"]
    assert list(document_pieces(lines, False, 1)) == ["".join(lines)]  # a custom pattern
    assert list(LineCounter(["a\nb", "c\n", "", "d"])) == ["a\n", "bc\n", "d"]


SMALL_TEXT = CORPUS[:20_000]
TOKENIZERS = {
    "gpt2-pattern": train_bpe([SMALL_TEXT], 330, pattern="gpt2").tokenizer(),
    "gpt4-pattern": train_bpe([SMALL_TEXT], 330, pattern="gpt4").tokenizer(),
    "no-pattern": train_bpe([SMALL_TEXT], 330, pattern="none").tokenizer(),
    "char-bpe": train_char_bpe([SMALL_TEXT], 200, split="word_punct").tokenizer(),
}


@settings(max_examples=80, deadline=None)
@given(st.lists(st.text(alphabet="ab.' \t\n\ré€🍕\u3000", max_size=30), max_size=8),
       st.sampled_from(sorted(TOKENIZERS)), st.integers(1, 40))
def test_streamed_counts_equal_the_whole_text_for_every_kind(blocks, kind, piece_chars):
    tokenizer, text = TOKENIZERS[kind], "".join(blocks)
    if tokenizer.algorithm == "byte_bpe":
        pieces = list(document_pieces(LineCounter(blocks), tokenizer.pretokenizer.line_cuts,
                                      piece_chars))
        assert "".join(pieces) == text
        assert sum(len(tokenizer.encode_ordinary(p)) for p in pieces) == \
            len(tokenizer.encode_ordinary(text))
    result = evaluate(tokenizer, blocks)
    assert result["tokens"] == len(tokenizer.encode_ordinary(text))
    assert result["words"] == len(text.split())


def test_block_pieces_cut_where_document_pieces_may():
    pieces = BlockPieces(["a\n", "\nb\nc \n", "d\ne"], True, 1)
    assert list(pieces) == ["a\n\nb\n", "c \nd\n", "e"] and pieces.count == 6
    custom = BlockPieces(["a\n", "b\n"], False, 1)
    assert list(custom) == ["a\nb\n"] and custom.count == 2


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(alphabet="ab.' \t\n\ré€🍕\u3000\x1c", max_size=30), max_size=10),
       st.integers(1, 40), st.booleans())
def test_block_pieces_are_allowed_cuts_and_count_the_lines(blocks, piece_chars, line_cuts):
    text = "".join(blocks)
    pieces = BlockPieces(blocks, line_cuts, piece_chars)
    found = list(pieces)
    assert "".join(found) == text and "" not in found
    assert pieces.count == len(list(LineCounter(blocks)))
    for before, after in zip(found, found[1:]):
        assert line_cuts and cut_allowed(BYTE_LEVEL_LINES, before[-2:], after)


@pytest.mark.parametrize("kind", ["gpt2-pattern", "gpt4-pattern"])
def test_small_pieces_give_the_whole_text_numbers(kind, monkeypatch):
    tokenizer = TOKENIZERS[kind]
    lines = CORPUS[:30_000].splitlines(keepends=True)
    monkeypatch.setattr(evaluation, "PIECE_CHARS", 50)
    pieces = BlockPieces(lines, True)
    assert len(list(pieces)) > 10
    small = evaluate(tokenizer, lines)
    assert small.pop("encode_throughput_mb_s") > 0
    plain = reference_evaluate(tokenizer, lines)
    plain.pop("encode_throughput_mb_s")
    assert small == plain
