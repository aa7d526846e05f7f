"""The sandbox's children (``engines.sandbox``), with no Django: a child past its processor time
or its memory is stopped and named in words; a pool replaces a child that died."""

import json

import pytest

from tests.hostile_files import multiplying_replace, wordpiece
from tokenizers_app.engines.sandbox import EngineFailed, EnginePool, Limits, b64, run_once


def read(files: dict[str, bytes], limits: Limits, **checks) -> dict:
    return run_once({"op": "read", "files": {n: b64(d) for n, d in files.items()},
                     "format": None, "checks": checks}, limits)


def test_a_check_past_its_processor_time_is_stopped_and_named():
    vocab = {f"piece{i}": i for i in range(600_000)}
    vocab["[UNK]"] = 600_000
    files = {"tokenizer.json": json.dumps(wordpiece(vocab)).encode()}
    with pytest.raises(EngineFailed, match="used over 1 s of processor time and was stopped"):
        read(files, Limits(2 * 1024**3, 1, 60))


def test_a_check_past_its_wall_time_is_stopped_and_named():
    vocab = {f"piece{i}": i for i in range(600_000)}
    vocab["[UNK]"] = 600_000
    files = {"tokenizer.json": json.dumps(wordpiece(vocab)).encode()}
    with pytest.raises(EngineFailed, match="took over 0.2 s on this request and was stopped"):
        read(files, Limits(2 * 1024**3, 60, 0.2))


def test_a_pool_child_that_dies_of_its_memory_is_named_and_replaced():
    from tokenizers_app.engines.hf import HFEngine
    from tokenizers_app.engines.registry import engine_digest

    engine = HFEngine(multiplying_replace()["tokenizer.json"])
    pool = EnginePool(1, Limits(512 * 1024**2, 60, 60))
    try:
        call = ("spans", "hf", engine_digest(engine), engine.canonical)
        with pytest.raises(EngineFailed, match="needed more than the 512 MB of memory"):
            pool.call(*call, text="a" * 1000, allowed=[], disallowed="all")
        assert pool.call(*call, text="b", allowed=[], disallowed="all")["spans"]  # a new child
    finally:
        pool.close()
