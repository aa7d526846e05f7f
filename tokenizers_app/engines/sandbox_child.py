"""The sandbox's child (``python -m tokenizers_app.engines.sandbox_child MEMORY CPU``): sets its own
limits first, then answers frames until its input ends: an import's check (``untrusted``), or
loading an engine (kept by digest, bounded by the memory each measured when it loaded) and
encoding or decoding with it. Any failure is an answer in words; a crash is the parent's to
name (``sandbox.Child.death``)."""

from __future__ import annotations

import gc
import os
import resource
import sys
from collections import OrderedDict

from ..errors import RegistryError, Unencodable
from .frames import b64, read_frame, unb64, write_frame

MB = 1024 ** 2



def _set_limits(memory_bytes: int, cpu_seconds: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 5))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def _rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _cpu_used() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class _Engines:
    """The engines a child holds, least recently used forgotten first once their measured
    memory (resident bytes grown while each loaded) passes a share of the child's limit."""

    def __init__(self, budget: int):
        self.budget = budget
        self.entries: OrderedDict[str, tuple[object, int]] = OrderedDict()

    def get(self, digest: str):
        found = self.entries.get(digest)
        if found is not None:
            self.entries.move_to_end(digest)
            return found[0]
        return None

    def load(self, kind: str, digest: str, data: bytes):
        """The engine of ``data``, kept by its digest. A load that runs out of memory while
        other engines are kept forgets them all and tries once more: the engines kept are
        counted by the resident memory each added, which can be less than the address space
        the child's limit counts, and what a cache keeps must never refuse a version."""
        from .registry import engine_digest, load_engine

        before = _rss_bytes()
        try:
            engine = load_engine(kind, data)
        except MemoryError:
            if not self.entries:
                raise
            self.entries.clear()
            gc.collect()
            before = _rss_bytes()
            engine = load_engine(kind, data)
        size = max(_rss_bytes() - before, len(data))
        if digest and engine_digest(engine) == digest:
            self.entries[digest] = (engine, size)
            while len(self.entries) > 1 and sum(s for _, s in self.entries.values()) > \
                    self.budget:
                self.entries.popitem(last=False)
        return engine


def _handle(message: dict, engines: _Engines) -> dict:
    from . import untrusted

    op = message.get("op")
    if op == "read":  # an import: recognise, check and describe the files
        files = {name: unb64(data) for name, data in message["files"].items()}
        return untrusted.read_checked(files, message.get("format"), message.get("checks") or {})
    if op == "flush":  # an evaluation's words, kept here across its batches (kept_words)
        from . import kept_words

        return {"totals": kept_words.flush(message["session"], message["number"])}
    kind, digest = message["kind"], message["digest"]
    engine = None if op == "load" else engines.get(digest)  # a load reads the file given
    if engine is None:
        if "data" not in message:
            return {"need": True}
        engine = engines.load(kind, digest, unb64(message["data"]))
    if op == "load":
        return {"image": untrusted.image(engine, canonical=False)}
    if op == "spans":
        return {"spans": engine._encoded(message["text"], _special(message["allowed"]),
                                         _special(message["disallowed"]))}
    if op == "encode_ordinary_batch":
        return {"ids": engine.encode_ordinary_batch(message["texts"])}
    if op == "decode_batch":
        return {"texts": engine.decode_batch(message["batch"])}
    if op in ("segment", "extend_file"):  # an extension run of this model (library_extension)
        from . import library_extension as extension
        from .registry import kind_named

        if op == "segment":
            return {"words": extension.segment_counts(engine, message["texts"])}
        additions = [extension.Addition.from_json(row) for row in message["additions"]]
        return {"data": b64(kind_named(kind).extended_file(engine.canonical,
                                                                 additions))}
    if op == "totals":  # an evaluation's batch of documents: its totals, never its tokens
        from .evaluation import documents_wire

        key = (digest, id(engine))
        covered = _COVERED.setdefault(key, {}) if digest else {}  # (one without is not kept)
        if len(_COVERED) > 1:  # only the engine evaluated last keeps its words
            for other in [found for found in _COVERED if found != key]:
                del _COVERED[other]
        if message.get("session"):  # its words kept here until the evaluation asks
            from . import kept_words

            return {"totals": kept_words.batch(engine, message["texts"], covered,
                                               message["session"], message["number"])}
        return {"totals": documents_wire(engine, message["texts"], covered)}
    raise ValueError(f"unknown request {op!r}")


_COVERED: dict[tuple, dict] = {}  # words' coverage and lines' round trips, by engine


def _special(value):
    return value if value == "all" else frozenset(value)


def main(argv: list[str]) -> None:
    memory_bytes, cpu_seconds = int(argv[0]), int(argv[1])
    _set_limits(memory_bytes, cpu_seconds)
    engines = _Engines(budget=memory_bytes // 3)
    stdin, stdout = sys.stdin.buffer.fileno(), sys.stdout.buffer
    while True:
        try:
            message = read_frame(stdin, None)
        except (EOFError, ValueError):
            return
        os.ftruncate(2, 0)  # the library's last words are about this request
        os.lseek(2, 0, os.SEEK_SET)
        try:
            answer = _handle(message, engines)
        except MemoryError:
            answer = {"error": f"the tokenizer's library needed more than the "
                               f"{memory_bytes // MB:,} MB of memory it may use and was stopped"}
        except Unencodable as exc:  # a text the tokenizer cannot spell: 422, not a failure
            answer = {"error": str(exc), "class": "unencodable"}
        except RegistryError as exc:
            answer = {"error": str(exc), "class": "invalid", "field": exc.field}
        except ValueError as exc:
            answer = {"error": str(exc), "class": "value"}
        except BaseException as exc:  # the library's panic is a BaseException  # noqa: BLE001
            if isinstance(exc, (KeyboardInterrupt, SystemExit)):
                raise
            answer = {"error": f"the tokenizer's library failed on this request "
                               f"({type(exc).__name__}: {str(exc)[:200]})"}
        answer["loaded"] = list(engines.entries)
        answer["retire"] = _cpu_used() > cpu_seconds / 2
        if answer["retire"] and "totals" in answer and message.get("session"):
            from .kept_words import flush_into

            flush_into(answer["totals"], message["session"])  # (a new child counts on)
        write_frame(stdout, answer)


if __name__ == "__main__":
    main(sys.argv[1:])
