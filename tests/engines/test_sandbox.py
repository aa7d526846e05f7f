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


def test_a_load_out_of_memory_forgets_the_engines_kept_and_tries_once_more(monkeypatch):
    """The child's cache counts each engine by the resident memory it added, which can be less
    than the address space its limit counts: a load that then runs out of memory frees the
    engines kept and is tried again, instead of refusing the version."""
    from tokenizers_app.engines import registry, sandbox_child

    loads = []

    def load_engine(kind, data):
        loads.append(data)
        if data == b"big" and len(loads) == 2:  # the first try, with an engine kept
            raise MemoryError
        return object()

    monkeypatch.setattr(registry, "load_engine", load_engine)
    monkeypatch.setattr(registry, "engine_digest", lambda engine: "")
    engines = sandbox_child._Engines(budget=1 << 30)
    engines.entries["kept"] = (object(), 1)
    engines.load("hf", "", b"small")
    assert engines.load("hf", "", b"big") is not None
    assert loads == [b"small", b"big", b"big"] and not engines.entries

    def out_of_memory(kind, data):
        raise MemoryError

    monkeypatch.setattr(registry, "load_engine", out_of_memory)
    with pytest.raises(MemoryError):  # nothing kept to forget: the child answers in words
        engines.load("hf", "", b"big")
