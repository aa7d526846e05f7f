"""encode_batch's workers: each new pre-token merged once, ids exactly those of ``encode``."""

import os

import pytest

from tests.bpe.corpora import SAMPLES, varied_text
from tokenizers_app.bpe import batch, train_bpe

SPECIAL = "<|endoftext|>"


@pytest.fixture(scope="module")
def trained():
    return train_bpe(list(SAMPLES.values()), 256 + 1 + 800, special_tokens=[SPECIAL]).tokenizer()


@pytest.fixture(scope="module")
def chunks():
    text = varied_text()[:300_000]
    return [text[i:i + 7_000] + (SPECIAL if i % 3 else "") for i in range(0, len(text), 7_000)]


def _cold(tokenizer):
    """A copy of the tokenizer with an empty cache."""
    return type(tokenizer)(tokenizer.vocab, tokenizer.merges, tokenizer.special_ids,
                           tokenizer.pattern)


@pytest.mark.parametrize("workers", [2, 3])
def test_workers_with_a_cold_cache_give_the_ids_of_encode(trained, chunks, workers, monkeypatch):
    monkeypatch.setattr(batch, "ROUND_CHARS", 40_000)  # several rounds
    expected = [trained.encode(chunk, allowed_special="all") for chunk in chunks]
    got = batch.encode_chunks(_cold(trained), chunks, "all", "all", workers)
    assert got == expected


def test_a_worker_whose_cache_overflows_empties_it_and_stays_exact(trained, chunks, monkeypatch):
    monkeypatch.setattr(batch, "ROUND_CHARS", 40_000)
    cold = _cold(trained)
    cold.cache_size = 500  # far fewer than the distinct pre-tokens of a round
    expected = [trained.encode(chunk, allowed_special="all") for chunk in chunks]
    assert batch.encode_chunks(cold, chunks, "all", "all", 2) == expected


@pytest.mark.parametrize("workers", [2, 3])
def test_each_new_pre_token_is_merged_once_in_all_workers(trained, chunks, workers, tmp_path,
                                                          monkeypatch):
    """Every worker appends what it merges to one file; no pre-token is there twice, and all
    of the batch's pre-tokens are."""
    log = tmp_path / "merged.txt"
    cold = _cold(trained)
    bpe_many = cold._table.bpe_many

    def logged(pretokens):
        pretokens = list(pretokens)
        with open(log, "ab") as out:  # one append per call: whole lines from every process
            out.write(b"".join(repr(pretoken).encode() + b"\n" for pretoken in pretokens))
        return bpe_many(pretokens)

    monkeypatch.setattr(cold._table, "bpe_many", logged)
    monkeypatch.setattr(batch, "ROUND_CHARS", 10**9)  # one round: nothing is cached before
    batch.encode_chunks(cold, chunks, "all", "all", workers)
    merged = log.read_bytes().splitlines()
    wanted = {repr(pretoken.encode()).encode() for chunk in chunks
              for part in cold._pre_tokenize(chunk, "all", "all") if type(part) is list
              for pretoken in part}
    assert len(merged) == len(set(merged))
    assert set(merged) == wanted


def test_deal_gives_each_pretoken_to_one_worker_by_hash():
    pretokens = {f"p{i}" for i in range(100)}
    dealt = batch.deal(pretokens, 3)
    assert sorted(sum(dealt, [])) == sorted(pretokens)
    assert all(hash(pretoken) % 3 == index for index, group in enumerate(dealt) for pretoken in group)


def test_slices_cut_in_order_by_characters():
    chunks = ["a" * 10, "b" * 10, "c" * 10, "d" * 10]
    assert batch.slices(chunks, 2) == [(0, 2), (2, 4)]
    assert batch.slices(chunks, 6)[-1][1] == 4 and len(batch.slices(chunks, 6)) == 6
    assert batch.slices([], 2) == [(0, 0), (0, 0)]


def test_an_error_in_a_worker_is_raised_in_the_caller(trained, chunks):
    with pytest.raises(ValueError, match="not allowed"):
        batch.encode_chunks(_cold(trained), chunks, set(), "all", 2)


def test_a_worker_that_dies_is_reported(trained, chunks, monkeypatch):
    monkeypatch.setattr(batch, "_work", lambda key, index, pipe: os._exit(3))
    with pytest.raises(RuntimeError, match="worker 1 stopped"):
        batch.encode_chunks(_cold(trained), chunks, "all", "all", 2)


def test_the_callers_cache_keeps_what_worker_0_learned(trained, chunks):
    cold = _cold(trained)
    batch.encode_chunks(cold, chunks, "all", "all", 2)
    first = set(cold.pretokenizer.split(chunks[0].replace(SPECIAL, "")))
    assert first <= cold._cache.keys()


@pytest.mark.parametrize("workers", [2, 3])
def test_workers_apart_give_the_ids_of_encode(trained, chunks, workers):
    """``encode_apart``: each worker encodes its own share (the compiled one-pass encoder)."""
    expected = [trained.encode(chunk, allowed_special="all") for chunk in chunks]
    assert batch.encode_apart(_cold(trained), chunks, "all", "all", workers) == expected


def test_an_error_or_a_death_of_a_worker_apart_reaches_the_caller(trained, chunks, monkeypatch):
    with pytest.raises(ValueError, match="not allowed"):
        batch.encode_apart(_cold(trained), chunks, set(), "all", 2)
    monkeypatch.setattr(batch, "_work_apart", lambda key, index, pipe: os._exit(3))
    with pytest.raises(RuntimeError, match="worker 1 stopped"):
        batch.encode_apart(_cold(trained), chunks, "all", "all", 2)


def test_encode_batch_works_apart_only_with_the_one_pass_encoder(trained, chunks, monkeypatch):
    used = []
    for name in ("encode_apart", "encode_chunks"):
        real = getattr(batch, name)
        monkeypatch.setattr(f"tokenizers_app.bpe.tokenizer.{name}",
                            lambda *args, real=real, name=name: used.append(name) or real(*args))
    texts = ["".join(chunks)] * 4  # over BATCH_MIN_CHARS
    expected = [trained.encode(text, allowed_special="all") for text in texts]
    assert _cold(trained).encode_batch(texts, allowed_special="all", workers=2) == expected
    assert used == ["encode_apart" if trained._one_pass() is not None else "encode_chunks"]
