"""A 100k-merge version through the configured database and back, one run.

    python bench/db_roundtrip.py [--merges 100000] [--repeat 3]
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/registry python bench/db_roundtrip.py

Builds a valid byte-level tokenizer with N merges (synthetic, seeded), then times: the content
digest; writing the version with its MergeRule and VocabEntry rows in one transaction (COPY on
Postgres, executemany on SQLite); and ``TokenizerVersion.load_tokenizer()``. For scale it times
the same tokenizer loaded from a file in the same run: our native JSON (``loads_tokenizer``) and
Hugging Face ``tokenizers`` reading its tokenizer.json. The bench tokenizer is deleted at the end.
Goals: write < 2 s, load < 0.3 s.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "registry.settings")
os.environ.setdefault("DEBUG", "1")  # as manage.py on a machine with no environment

import django  # noqa: E402

django.setup()
from registry.local_dirs import ensure_local_dirs  # noqa: E402  (a fresh checkout has no var/)
ensure_local_dirs()

from django.core.management import call_command  # noqa: E402
from django.db import connection, transaction  # noqa: E402

from tokenizers_app.bpe import Tokenizer  # noqa: E402
from tokenizers_app.bpe.canonical import content_digest  # noqa: E402
from tokenizers_app.bpe.formats import dumps_tokenizer, loads_tokenizer  # noqa: E402
from tokenizers_app.bpe.training import build_vocab  # noqa: E402
from tokenizers_app.models import Tokenizer as TokenizerRecord  # noqa: E402
from tokenizers_app.models import TokenizerVersion  # noqa: E402

SPECIALS = ["<|endoftext|>"]
BENCH_PREFIX = f"bench-roundtrip-{os.getpid()}-"


def synthetic_tokenizer(num_merges: int, seed: int = 0) -> Tokenizer:
    """A valid tokenizer: each merge joins two existing tokens of up to 8 bytes into a new one."""
    rng = random.Random(seed)
    short = [bytes([b]) for b in range(256)]
    seen, merges = set(short), []
    while len(merges) < num_merges:
        left, right = rng.choice(short), rng.choice(short)
        if left + right in seen:
            continue
        merges.append((left, right))
        seen.add(left + right)
        if len(left + right) <= 8:
            short.append(left + right)
    counts = list(range(10 * num_merges, 9 * num_merges, -1))
    return Tokenizer(build_vocab(merges, SPECIALS), merges, SPECIALS, "gpt2", merge_counts=counts)


def timed(function, repeat: int):
    """(best seconds, last result) over ``repeat`` calls."""
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return min(times), result


def write_version(core: Tokenizer, digest: str) -> TokenizerVersion:
    """A new bench tokenizer holding ``core`` as version 1, committed."""
    with transaction.atomic():
        record = TokenizerRecord.objects.create(name=f"{BENCH_PREFIX}{time.time_ns()}")
        version = TokenizerVersion.objects.create(
            tokenizer=record, number=1, pattern=core.pattern,
            special_tokens=core.special_tokens, vocab_size=len(core.vocab),
            merge_count=len(core.merges), digest=digest, source="import", status="ready")
        version.write_contents(core)
    return version


def hf_load(data: bytes):
    try:
        from tokenizers import Tokenizer as HFTokenizer
    except ImportError:
        return None
    return HFTokenizer.from_str(data.decode())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--merges", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    core = synthetic_tokenizer(args.merges)
    digest_s, digest = timed(lambda: content_digest(core), 1)
    try:
        write_s, version = timed(lambda: write_version(core, digest), args.repeat)
        load_s, loaded = timed(version.load_tokenizer, args.repeat)
        rows_s, _ = timed(version.read_contents, args.repeat)
    finally:
        bench = TokenizerRecord.objects.filter(name__startswith=BENCH_PREFIX)
        TokenizerVersion.objects.filter(tokenizer__in=bench).delete()
        bench.delete()
    if (loaded.merges, loaded.vocab, loaded.merge_counts) != (core.merges, core.vocab,
                                                              core.merge_counts):
        sys.exit("the loaded tokenizer differs from the one written")
    native = dumps_tokenizer(core, "native")
    native_s, _ = timed(lambda: loads_tokenizer(native, "native"), args.repeat)
    hf_json = next(iter(dumps_tokenizer(core, "hf").values()))
    hf_s, hf = timed(lambda: hf_load(hf_json), args.repeat)
    print(f"database: {connection.vendor} ({connection.settings_dict['NAME']})")
    print(f"tokenizer: {len(core.merges)} merges, {len(core.vocab)} vocab entries")
    print(f"content digest:              {digest_s:7.3f} s")
    print(f"write version (one commit):  {write_s:7.3f} s   goal < 2 s")
    print(f"load_tokenizer():            {load_s:7.3f} s   goal < 0.3 s")
    print(f"  of which reading the rows: {rows_s:7.3f} s   (the rest: the core Tokenizer(...))")
    print(f"ours, native JSON file load: {native_s:7.3f} s   db load / file load = "
          f"{load_s / native_s:.2f}")
    if hf is not None:
        print(f"HF tokenizers from_str:      {hf_s:7.3f} s   db load / HF load = "
              f"{load_s / hf_s:.2f}")
    print(f"(each time is the best of {args.repeat})")


if __name__ == "__main__":
    main()
