"""``Tokenizer.encode_batch`` across processes, with each new pre-token merged only once.

This process is worker 0 (its cache keeps what it learns); the others are forked, so they inherit
the tokenizer, its cache and the chunks to encode; only pre-tokens, their ids and packed ids
cross the pipes. A cold cache makes BPE the larger part of
the work, and two halves of a text share about a third of their distinct pre-tokens, so the
workers share them out instead of each merging all of its own. The batch runs in rounds of at
most ``ROUND_CHARS`` characters per worker (which bounds the pre-tokens held at once); in each:

1. every worker pre-tokenizes its chunks and announces the distinct pre-tokens its cache lacks;
2. worker 0 passes each announcement to the other workers, and each worker merges the
   pre-tokens it owns: those it alone needs, and its deal of those several need (``_owns``);
3. worker 0 passes each worker's results to the others, which add them to their caches;
4. every worker looks up the ids of its chunks; the forked ones send them packed as 32-bit
   numbers.

Worker 0 forwards the others' messages as bytes, without unpickling them. A worker that fails
sends its exception in place of its next message, and worker 0 raises it.
"""

from __future__ import annotations

import gc
import multiprocessing
import pickle
from array import array
from itertools import chain

ROUND_CHARS = 1 << 23  # characters per worker per round
_OK, _ERROR = b"\x00", b"\x01"
_JOBS: dict[int, tuple] = {}  # the work of a running batch, inherited by the forked workers


def encode_chunks(tokenizer, chunks: list[str], allowed_special, disallowed_special,
                  workers: int) -> list[list[int]]:
    """The ids of each chunk (``tokenizer.encode(chunk, ...)``), computed by this process (worker
    0, whose cache keeps what it learns) and ``workers - 1`` forked ones."""
    rounds = max(1, -(-sum(map(len, chunks)) // (workers * ROUND_CHARS)))
    plan = slices(chunks, workers * rounds)
    key = id(plan)
    _JOBS[key] = (tokenizer, chunks, plan, allowed_special, disallowed_special, workers)
    context = multiprocessing.get_context("fork")
    pipes, processes = [], []
    gc.freeze()  # the workers do not copy pages just to collect this process's objects
    try:
        for index in range(1, workers):
            parent_end, child_end = context.Pipe()
            process = context.Process(target=_work, args=(key, index, child_end), daemon=True)
            process.start()
            child_end.close()
            pipes.append(parent_end)
            processes.append(process)
        gc.unfreeze()

        def exchange(message: bytes) -> list[bytes]:
            """Worker 0's side: gather the others' messages, hand each worker everyone else's
            (in worker order), keep the others' for itself."""
            messages = [message] + [_receive(pipe, index) for index, pipe in enumerate(pipes, 1)]
            for index, pipe in enumerate(pipes, 1):
                for other, data in enumerate(messages):
                    if other != index:
                        pipe.send_bytes(data)
            return messages[1:]

        out: list[list[int]] = [[] for _ in chunks]
        for round_index in range(rounds):
            start, end = plan[round_index * workers]
            out[start:end] = _round(_JOBS[key], 0, start, end, exchange)
            for index, pipe in enumerate(pipes, 1):
                start, _end = plan[round_index * workers + index]
                packed = pickle.loads(_receive(pipe, index))
                for position, data in enumerate(packed, start):
                    out[position] = array("i", data).tolist()
        return out
    finally:
        gc.unfreeze()
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


def _owns(piece: str, index: int, holders: list[set[str]]) -> bool:
    """Whether worker ``index``, which needs ``piece``, merges it: the worker its hash points to
    if that one needs it too, else the first worker that needs it. Forked workers share the
    hash seed, so they all agree."""
    dealt = hash(piece) % len(holders)
    if dealt == index:
        return True
    if piece in holders[dealt]:
        return False
    return not any(piece in holders[other] for other in range(index))


def _round(job: tuple, index: int, start: int, end: int, exchange) -> list[list[int]]:
    """One round of worker ``index`` over chunks ``start:end``: announce, merge its own share,
    take the others' results, look up its ids. ``exchange(message)`` sends this worker's
    message and returns the other workers' (in worker order)."""
    tokenizer, chunks, _plan, allowed_special, disallowed_special, workers = job
    cache = tokenizer._cache
    parts = [tokenizer._pre_tokenize(chunk, allowed_special, disallowed_special)
             for chunk in chunks[start:end]]
    pieces = set(chain.from_iterable(part for chunk_parts in parts
                                     for part in chunk_parts if type(part) is list))
    missing = pieces.difference(cache)
    if len(cache) + len(missing) > tokenizer.cache_size:
        cache.clear()
        missing = pieces
    others = iter(exchange(pickle.dumps(list(missing), pickle.HIGHEST_PROTOCOL)))
    holders = [missing if other == index else set(pickle.loads(next(others)))
               for other in range(workers)]
    mine = [piece for piece in missing if _owns(piece, index, holders)]
    merged = tokenizer._table.bpe_many(map(str.encode, mine))
    cache.update(zip(mine, merged))
    for results in exchange(pickle.dumps((mine, merged), pickle.HIGHEST_PROTOCOL)):
        cache.update(zip(*pickle.loads(results)))
    return [tokenizer._lookup(chunk_parts) for chunk_parts in parts]


def _work(key: int, index: int, pipe) -> None:
    """A forked worker: its rounds, talking to worker 0 through ``pipe``."""
    gc.disable()  # a short life that makes no cycles: collecting would only cost time
    job = _JOBS[key]
    workers = job[-1]

    def exchange(message: bytes) -> list[bytes]:
        pipe.send_bytes(_OK + message)
        return [pipe.recv_bytes() for _ in range(workers - 1)]

    try:
        for start, end in job[2][index::workers]:
            ids = _round(job, index, start, end, exchange)
            packed = [array("i", chunk_ids).tobytes() for chunk_ids in ids]
            pipe.send_bytes(_OK + pickle.dumps(packed, pickle.HIGHEST_PROTOCOL))
    except BaseException as exc:  # noqa: BLE001 - every failure goes back to worker 0
        try:
            payload = pickle.dumps(exc)
        except Exception:  # noqa: BLE001 - an exception that does not pickle
            payload = pickle.dumps(RuntimeError(f"{type(exc).__name__}: {exc}"))
        try:
            pipe.send_bytes(_ERROR + payload)
        except OSError:
            pass
    finally:
        pipe.close()
