"""Evaluation totals merge: a corpus cut into two parts at every cut its kind allows (and into
parts as ``plan_parts`` plans them, read back by byte range) gives, merged, exactly the totals
and the metrics of one process evaluating it whole, for every kind: byte-level BPE (a named
pattern, and a pattern of its own that is never cut), character-level BPE, the baselines, every
library kind in this process, and one in its sandbox child."""

from __future__ import annotations

import functools

import pytest

from tests.bpe.corpora import SAMPLES
from tests.engines.test_engines import KINDS
from tokenizers_app.bpe import train_bpe, train_char_bpe
from tokenizers_app.bpe.baselines import ByteTokenizer, CharTokenizer
from tokenizers_app.bpe.eval_parts import part_blocks, plan_parts
from tokenizers_app.bpe.eval_totals import NONE, EvalTotals, cut_allowed
from tokenizers_app.engines import read_engine_files
from tokenizers_app.engines.registry import cut_rule, evaluate_totals, metrics_of_totals

# blank lines (one, two, with \r), indented and trailing-space lines, CJK, emoji, no final newline
CORPUS = (SAMPLES["english"][:500] + "\n\n" + "def f(x):\n\n\n    return x  \n\r\n"
          + SAMPLES["chinese"][:60] + "\n東京 🍕 café\u3000end\n\nLast line, no newline")
TRAIN = "".join(SAMPLES.values())[:20_000]


@functools.cache
def tokenizer_of(kind: str):
    if kind == "byte-gpt2":
        return train_bpe([TRAIN], 330, pattern="gpt2").tokenizer()
    if kind == "byte-own-pattern":
        return train_bpe([TRAIN], 330, pattern="none").tokenizer()
    if kind == "char-bpe":
        return train_char_bpe([TRAIN], 200, split="word_punct").tokenizer()
    if kind == "bytes":
        return ByteTokenizer()
    if kind == "chars":
        return CharTokenizer()
    return read_engine_files(KINDS[kind]())


ALL_KINDS = ["byte-gpt2", "byte-own-pattern", "char-bpe", "bytes", "chars", *sorted(KINDS)]


class Ranges:
    """A range reader over bytes in memory (``size``, ``read``), as the store's."""

    def __init__(self, data: bytes):
        self.data, self.size, self.name = data, len(data), "memory"

    def read(self, start: int, end: int) -> bytes:
        return self.data[start:end]


def allowed_cuts(text: str, rule: str) -> list[int]:
    """Every character offset where ``rule`` allows a cut."""
    lines = text.splitlines(keepends=True)
    cuts, at = [], 0
    for before, after in zip(lines, lines[1:]):
        at += len(before)
        if cut_allowed(rule, before, after):
            cuts.append(at)
    return cuts


def totals(tokenizer, text: str) -> EvalTotals:
    return evaluate_totals(tokenizer, [text]) if text else EvalTotals()


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_two_parts_at_every_allowed_cut_merge_to_the_one_process_totals(kind):
    tokenizer = tokenizer_of(kind)
    whole = evaluate_totals(tokenizer, CORPUS.splitlines(keepends=True))
    rule = cut_rule(tokenizer)
    cuts = allowed_cuts(CORPUS, rule)
    assert (cuts == []) == (rule == NONE), rule  # a corpus with cuts: each is tried
    for cut in cuts:
        merged = totals(tokenizer, CORPUS[:cut]).merge(totals(tokenizer, CORPUS[cut:]))
        assert merged.comparable() == whole.comparable(), (kind, cut, CORPUS[cut - 5:cut + 5])
    metrics = metrics_of_totals(tokenizer, whole)
    assert metrics["bytes"] == len(CORPUS.encode()) and metrics["tokens"] > 0


@pytest.mark.parametrize("kind", ALL_KINDS)
def test_planned_parts_read_by_byte_range_merge_to_the_one_process_metrics(kind):
    tokenizer = tokenizer_of(kind)
    source = Ranges(CORPUS.encode())
    ranges = plan_parts(source, cut_rule(tokenizer), part_bytes=64)
    assert ranges[0][0] == 0 and ranges[-1][1] == source.size
    assert all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))
    if cut_rule(tokenizer) != NONE:
        assert len(ranges) > 3
    merged = EvalTotals()
    for start, end in ranges:
        merged.merge(EvalTotals.from_json(
            evaluate_totals(tokenizer, part_blocks(source, start, end, block_bytes=7)).to_json()))
    whole = evaluate_totals(tokenizer, [CORPUS])
    assert merged.comparable() == whole.comparable()
    ours, theirs = metrics_of_totals(tokenizer, merged), metrics_of_totals(tokenizer, whole)
    for name in ours.keys() - {"encode_throughput_mb_s"}:
        assert ours[name] == theirs[name], name
    assert ours.keys() == theirs.keys()


def test_a_sandboxed_engine_counts_in_its_child_as_in_this_process():
    from tokenizers_app.engines.remote import SandboxedEngine
    from tokenizers_app.engines.sandbox import EnginePool, Limits, raise_refusal

    pool = EnginePool(1, Limits(1024**3, 120, 60))
    try:
        for kind in ("llama-bpe", "sentencepiece-unigram"):
            [data] = KINDS[kind]().values()
            local = tokenizer_of(kind)
            image = raise_refusal(pool.call("load", local.algorithm, "", data))["image"]
            remote = SandboxedEngine(image, lambda: pool, "", None, data)
            ranges = plan_parts(Ranges(CORPUS.encode()), cut_rule(remote), part_bytes=100)
            merged = EvalTotals()
            for start, end in ranges:
                merged.merge(evaluate_totals(remote, part_blocks(Ranges(CORPUS.encode()),
                                                                 start, end)))
            assert merged.comparable() == evaluate_totals(local, [CORPUS]).comparable(), kind
    finally:
        pool.close()
