"""``Tokenizer.encode_batch`` across processes, with each new pre-token merged only once.

This process is worker 0 (its cache keeps what it learns); the others are forked, so they inherit
the tokenizer, its cache and the chunks to encode; only pre-tokens, their ids and packed ids
cross the pipes. A cold cache makes BPE the larger part of the work, and two halves of a text
share about a third of their distinct pre-tokens, so the workers share them out instead of each
merging all of its own: a pre-token belongs to the worker its hash points to (forked workers
share the hash seed). The batch runs in rounds of at most ``ROUND_CHARS`` characters per worker
(which bounds the pre-tokens held at once); in each:

1. every worker pre-tokenizes its chunks and asks each other worker to merge the pre-tokens its
   cache lacks that belong to that worker;
2. every worker merges the pre-tokens that belong to it, its own and those it was asked for,
   and answers each request with their ids;
3. every worker looks up the ids of its chunks; the forked ones send them packed as 32-bit
   numbers.

Messages go through worker 0, which forwards them as bytes, without unpickling them. A worker
that fails sends its exception in place of its next message, and worker 0 raises it.

With the compiled one-pass encoder (gpt2 pattern), merging costs less than sharing the
pre-tokens out: ``encode_apart`` has each worker encode its own share of the chunks instead.

Its plain twin: ``Tokenizer.encode`` of each text, which ``tests/bpe/test_batch.py`` compares
it with (cold caches, several rounds, an overflowing cache).
"""

from __future__ import annotations

import gc
import multiprocessing
import pickle
from array import array
from contextlib import contextmanager
from itertools import chain

from .encoding_loop import missing_keys

ROUND_CHARS = 1 << 23  # characters per worker per round
_OK, _ERROR = b"\x00", b"\x01"
_JOBS: dict[int, tuple] = {}  # the work of a running batch, inherited by the forked workers


def encode_chunks(tokenizer, chunks: list[str], allowed_special, disallowed_special,
                  workers: int) -> list[list[int]]:
    """The ids of each chunk (``tokenizer.encode(chunk, ...)``), computed by this process (worker
    0, whose cache keeps what it learns) and ``workers - 1`` forked ones."""
    rounds = max(1, -(-sum(map(len, chunks)) // (workers * ROUND_CHARS)))
    plan = slices(chunks, workers * rounds)
    with _forked((tokenizer, chunks, plan, allowed_special, disallowed_special, workers),
                 _work) as (key, pipes):

        def exchange(messages: list[bytes]) -> list[bytes]:
            """Worker 0's side: ``messages[j]`` goes to worker ``j``; gather the others'
            messages and hand each worker those addressed to it (in worker order); return those
            addressed to worker 0."""
            sent = [messages] + [pickle.loads(_receive(pipe, index))
                                 for index, pipe in enumerate(pipes, 1)]
            for index, pipe in enumerate(pipes, 1):
                for other, addressed in enumerate(sent):
                    if other != index:
                        pipe.send_bytes(addressed[index])
            return [addressed[0] for addressed in sent[1:]]

        out: list = [None] * len(chunks)
        for round_index in range(rounds):
            start, end = plan[round_index * workers]
            out[start:end] = _round(_JOBS[key], 0, start, end, exchange)
            for index, pipe in enumerate(pipes, 1):
                start, _end = plan[round_index * workers + index]
                packed = pickle.loads(_receive(pipe, index))
                for position, data in enumerate(packed, start):
                    out[position] = array("i", data).tolist()
        return out


def encode_apart(tokenizer, chunks: list[str], allowed_special, disallowed_special,
                 workers: int) -> list[list[int]]:
    """The ids of each chunk, as ``encode_chunks`` gives them, but each worker encodes its own
    run of chunks with nothing shared: for the compiled one-pass encoder
    (``MergeTable.encode_gpt2``), whose merging costs less than sharing the pre-tokens out
    would. This process keeps what it learns; the forked workers send their ids packed."""
    plan = slices(chunks, workers)
    with _forked((tokenizer, chunks, plan, allowed_special, disallowed_special, workers),
                 _work_apart) as (_key, pipes):
        start, end = plan[0]
        out = [tokenizer.encode(chunk, allowed_special, disallowed_special)
               for chunk in chunks[start:end]]
        for index, pipe in enumerate(pipes, 1):
            out += [array("i", data).tolist() for data in pickle.loads(_receive(pipe, index))]
        return out


@contextmanager
def _forked(job: tuple, target):
    """Start ``workers - 1`` forked processes running ``target(key, index, pipe)`` over
    ``job`` (found in ``_JOBS[key]``); yield ``(key, pipes)``; stop them at the end."""
    key = id(job)
    _JOBS[key] = job
    context = multiprocessing.get_context("fork")
    pipes, processes = [], []
    collecting = gc.isenabled()
    gc.disable()  # the batch makes no reference cycles: collecting would only cost time
    gc.freeze()  # the workers do not copy pages just to collect this process's objects
    try:
        for index in range(1, job[-1]):
            parent_end, child_end = context.Pipe()
            process = context.Process(target=target, args=(key, index, child_end), daemon=True)
            process.start()
            child_end.close()
            pipes.append(parent_end)
            processes.append(process)
        gc.unfreeze()
        yield key, pipes
    finally:
        gc.unfreeze()
        if collecting:
            gc.enable()
        del _JOBS[key]
        for pipe in pipes:
            pipe.close()
        for process in processes:
            process.join(timeout=5)
            if process.is_alive():
                process.terminate()
                process.join()


def slices(chunks: list[str], count: int) -> list[tuple[int, int]]:
    """``count`` runs ``(start, end)`` of ``chunks``, in order, of about the same number of
    characters each (some may be empty)."""
    total = sum(map(len, chunks))
    bounds, start, size = [], 0, 0
    for end, chunk in enumerate(chunks, 1):
        size += len(chunk)
        while len(bounds) < count - 1 and size * count >= total * (len(bounds) + 1):
            bounds.append((start, end))
            start = end
    bounds += [(start, start)] * (count - 1 - len(bounds))
    bounds.append((start, len(chunks)))
    return bounds


def _receive(pipe, index: int) -> memoryview:
    try:
        data = pipe.recv_bytes()
    except EOFError:
        raise RuntimeError(f"encode_batch: worker {index} stopped before its work was done") \
            from None
    if data[:1] == _ERROR:
        raise pickle.loads(data[1:])
    return memoryview(data)[1:]


def _round(job: tuple, index: int, start: int, end: int, exchange) -> list:
    """One round of worker ``index`` over chunks ``start:end``: ask, merge what belongs to it,
    answer, look up its ids. ``exchange(messages)`` sends ``messages[j]`` to worker ``j`` and
    returns the messages the other workers addressed to this one (in worker order). Worker 0
    returns lists of ids; the others return them packed as 32-bit numbers, ready to send."""
    tokenizer, chunks, _plan, allowed_special, disallowed_special, workers = job
    cache = tokenizer._cache
    parts = [tokenizer._pre_tokenize(chunk, allowed_special, disallowed_special)
             for chunk in chunks[start:end]]
    pretokens = set(chain.from_iterable(part for chunk_parts in parts
                                        for part in chunk_parts if type(part) is list))
    missing = missing_keys(cache, pretokens, tokenizer.cache_size)
    dealt = deal(missing, workers)
    others = [other for other in range(workers) if other != index]
    asks = [b"" if other == index else pickle.dumps(group, pickle.HIGHEST_PROTOCOL)
            for other, group in enumerate(dealt)]
    asked = [pickle.loads(message) for message in exchange(asks)]
    mine = list(set(dealt[index]).union(*asked))
    merged = dict(zip(mine, tokenizer._table.bpe_many(map(str.encode, mine))))
    cache.update(merged)
    answers = dict(zip(others, [pickle.dumps(list(map(merged.__getitem__, group)),
                                             pickle.HIGHEST_PROTOCOL) for group in asked]))
    replies = exchange([answers.get(other, b"") for other in range(workers)])
    for other, reply in zip(others, replies):
        cache.update(zip(dealt[other], pickle.loads(reply)))
    if index == 0:
        return [tokenizer._lookup(chunk_parts) for chunk_parts in parts]
    return _packed_lookup(parts, pretokens, cache)


def deal(pretokens, workers: int) -> list[list[str]]:
    """``pretokens`` dealt to ``workers`` by hash: ``deal(pretokens, n)[j]`` belongs to worker
    ``j``."""
    dealt: list[list[str]] = [[] for _ in range(workers)]
    for pretoken in pretokens:
        dealt[hash(pretoken) % workers].append(pretoken)
    return dealt


def _packed_lookup(parts: list[list], pretokens: set[str], cache: dict) -> list[bytes]:
    """The ids of each chunk packed as 32-bit numbers: each pre-token's ids are packed once, and
    a chunk's are joined in C (which costs less than building lists of ids and packing them)."""
    pretokens = list(pretokens)
    packed = dict(zip(pretokens, map(_pack, map(cache.__getitem__, pretokens))))
    return [b"".join([_pack((part,)) if type(part) is int else b"".join(map(packed.__getitem__,
                                                                            part))
                      for part in chunk_parts])
            for chunk_parts in parts]


def _pack(ids) -> bytes:
    return array("i", ids).tobytes()


def _work(key: int, index: int, pipe) -> None:
    """A forked worker: its rounds, talking to worker 0 through ``pipe``. It inherits the
    paused garbage collector: a short life that makes no reference cycles."""
    job = _JOBS[key]
    workers = job[-1]

    def exchange(messages: list[bytes]) -> list[bytes]:
        pipe.send_bytes(_OK + pickle.dumps(messages, pickle.HIGHEST_PROTOCOL))
        return [pipe.recv_bytes() for _ in range(workers - 1)]

    try:
        for start, end in job[2][index::workers]:
            packed = _round(job, index, start, end, exchange)
            pipe.send_bytes(_OK + pickle.dumps(packed, pickle.HIGHEST_PROTOCOL))
    except BaseException as exc:  # noqa: BLE001 - every failure goes back to worker 0
        _send_error(pipe, exc)
    finally:
        pipe.close()


def _work_apart(key: int, index: int, pipe) -> None:
    """A forked worker of ``encode_apart``: its run of chunks, encoded and sent packed."""
    tokenizer, chunks, plan, allowed_special, disallowed_special, _workers = _JOBS[key]
    try:
        start, end = plan[index]
        packed = [_pack(tokenizer.encode(chunk, allowed_special, disallowed_special))
                  for chunk in chunks[start:end]]
        pipe.send_bytes(_OK + pickle.dumps(packed, pickle.HIGHEST_PROTOCOL))
    except BaseException as exc:  # noqa: BLE001 - every failure goes back to worker 0
        _send_error(pipe, exc)
    finally:
        pipe.close()


def _send_error(pipe, exc: BaseException) -> None:
    try:
        payload = pickle.dumps(exc)
    except Exception:  # noqa: BLE001 - an exception that does not pickle
        payload = pickle.dumps(RuntimeError(f"{type(exc).__name__}: {exc}"))
    try:
        pipe.send_bytes(_ERROR + payload)
    except OSError:
        pass
