"""The artifact API under load: download throughput and p99, and the encode endpoint's latency.

    python bench/api_load.py [--tokenizer PATH | --merges N] [--clients 8] [--seconds 10]
                             [--only encode|downloads]

Sets up a throwaway registry (SQLite and a media folder in a temporary directory, ``DEBUG`` off)
holding one version aliased ``production``: GPT-2 (``../shared/fixtures/gpt2`` or
``TOKENIZER_FIXTURES``; its ``tokenizer.json`` is 2.1 MB), any tokenizer file or folder given with
``--tokenizer``, or with ``--merges N`` a synthetic valid one of N merges; and serves it with
gunicorn (``--workers`` sync workers, the deployment's server) on a free loopback port. Each
round:

- ``--clients`` client processes download ``NAME@production`` as Hugging Face ``tokenizer.json``
  over and over for ``--seconds`` (a cached artifact: rendered once per digest, then sent from
  its file), first as plain bytes, then as a client that accepts gzip gets it (``curl
  --compressed``, ``requests``); every answer is checked against the ETag and size of the first;
- one client posts a 10 KB text (prose, code, CJK and emoji) to the encode endpoint ``--encodes``
  times, one after another.

``--only encode`` (or ``downloads``) runs that part alone, for a quick round. The throttles'
counts go to the file cache under the temporary folder, unless ``--redis`` starts a throwaway
``redis-server`` (on ``PATH``) for them, as the deployment counts in Redis (``CACHE_URL``).

It prints requests per second, MB/s and the latency percentiles per round, then the spread over
the rounds, and the server's CPU time per request (user and system time of gunicorn's workers,
from ``/proc``): the load generator and anything else on the machine move the rates and
latencies, much less the CPU a request costs the server. Goal on the 2-core machine this was
written on: downloads at least 500 requests/s with p99 under 50 ms (aim: 1000 requests/s and
20 ms). The load generator shares the machine with the server, so the figures are a floor.
Needs gunicorn (``pip install -e '.[bench]'``).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import http.client
import json
import multiprocessing
import os
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
NAME = "load-bpe"
TEXT_10K = ("The registry ships tokenizers. def encode(text): return ids  # code\n"
            "字节对编码把常见的字节序列合并成一个词元。 🙂🚀 Ünïcödé façade naïve.\n") * 80


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def setup_registry(environment: dict[str, str], tokenizer: str, merges: int) -> None:
    """Migrate the throwaway database and add the version, in a child process with its env."""
    core = (f"load_tokenizer({tokenizer!r})" if tokenizer else f"synthetic_tokenizer({merges})")
    script = f"""
import django
django.setup()
from registry.local_dirs import ensure_local_dirs  # noqa: E402  (a fresh checkout has no var/)
ensure_local_dirs()
from django.core.management import call_command
from django.db import transaction
call_command("migrate", verbosity=0)
from bench.db_roundtrip import synthetic_tokenizer
from tokenizers_app.bpe.formats import load_tokenizer
from tokenizers_app.models import Tokenizer, TokenizerVersion
from tokenizers_app.services.staff import move_alias
from tokenizers_app.services.versions import add_version
with transaction.atomic():
    record = Tokenizer.objects.create(name={NAME!r})
    version = add_version(tokenizer=record, core={core},
                          source=TokenizerVersion.Source.IMPORT)
from django.contrib.auth import get_user_model
staff = get_user_model().objects.create_user("bench", is_staff=True)
move_alias(version=version, name="production", user=staff)
"""
    subprocess.run([sys.executable, "-c", script], env=environment, cwd=REPO, check=True)


def wait_for(port: int, server: subprocess.Popen) -> None:
    for _ in range(300):
        if server.poll() is not None:
            raise SystemExit(f"gunicorn exited with {server.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.1)
    raise SystemExit("gunicorn did not start listening")


def throwaway_environment(folder: Path) -> dict[str, str]:
    """The environment of a registry kept in ``folder`` (SQLite, media, broker and cache),
    ``DEBUG`` off, served on plain loopback http, with the throttles lifted (the server's own
    speed is measured, not the throttle's limits)."""
    return {**os.environ, "DJANGO_SETTINGS_MODULE": "registry.settings", "DEBUG": "0",
            "SECRET_KEY": secrets.token_urlsafe(50), "HTTPS": "0",  # plain loopback
            "THROTTLE_ENCODE": "1000000/second", "THROTTLE_WRITES": "1000000/second",
            "THROTTLE_UPLOADS": "1000000/second",
            "DATABASE_URL": f"sqlite:///{folder / 'registry.sqlite3'}",
            "REGISTRY_VAR_DIR": str(folder), "MEDIA_ROOT": str(folder / "media"),
            "ALLOWED_HOSTS": "127.0.0.1", "PYTHONPATH": str(REPO),
            # a connection kept between requests, as the deployment's Postgres keeps it (60 s)
            "SQLITE_CONN_MAX_AGE": "60"}


def start_redis(environment: dict[str, str]) -> subprocess.Popen:
    """A throwaway ``redis-server`` on a free loopback port, without persistence, named as the
    cache of ``environment`` (``CACHE_URL``) once it answers."""
    if shutil.which("redis-server") is None:
        raise SystemExit("--redis needs redis-server on PATH")
    port = free_port()
    redis = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                              "--save", "", "--appendonly", "no"], stdout=subprocess.DEVNULL)
    wait_for(port, redis)
    environment["CACHE_URL"] = f"redis://127.0.0.1:{port}/1"
    return redis


def gunicorn_path() -> str:
    if shutil.which("gunicorn", path=str(Path(sys.executable).parent)) is None:
        raise SystemExit("gunicorn is not installed beside this Python: "
                         "pip install -e '.[bench]'")
    return str(Path(sys.executable).parent / "gunicorn")


def start_gunicorn(environment: dict[str, str], workers: int) -> tuple[subprocess.Popen, int]:
    """gunicorn serving ``registry.wsgi`` with ``workers`` sync workers (the deployment's
    server) on a free loopback port, once it listens: (the process, the port)."""
    port = free_port()
    server = subprocess.Popen(
        [gunicorn_path(), "registry.wsgi", "--bind", f"127.0.0.1:{port}",
         "--workers", str(workers), "--worker-class", "sync", "--log-level", "warning"],
        env=environment, cwd=REPO)
    try:
        wait_for(port, server)
    except BaseException:
        stop_server(server)
        raise
    return server, port


def stop_server(server: subprocess.Popen | None) -> None:
    if server is not None and server.poll() is None:
        server.terminate()
        server.wait(timeout=30)


def server_cpu_seconds(server: subprocess.Popen) -> float:
    """User and system CPU seconds used so far by the gunicorn workers of ``server`` (Linux's
    ``/proc``; NaN where it cannot be read)."""
    try:
        workers = Path(f"/proc/{server.pid}/task/{server.pid}/children").read_text().split()
        stats = [Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                 for pid in workers]
    except OSError:
        return float("nan")
    # after the command's ")": state is field 3, utime and stime are fields 14 and 15
    return sum(int(fields[11]) + int(fields[12]) for fields in stats) / os.sysconf("SC_CLK_TCK")


def server_cpu_ms(server: subprocess.Popen, run, *args) -> dict:
    """``run(*args)`` (a round, giving a dict with ``requests``), with ``cpu_ms``: the server's
    CPU milliseconds per request during it."""
    before = server_cpu_seconds(server)
    result = run(*args)
    result["cpu_ms"] = 1000 * (server_cpu_seconds(server) - before) / max(1, result["requests"])
    return result


def as_expected(response: http.client.HTTPResponse, body: bytes, expect: int | tuple) -> bool:
    """``expect``: a status alone (a page), or (status, ETag, size) of an artifact."""
    if isinstance(expect, int):
        return response.status == expect
    return (response.status, response.headers["ETag"], len(body)) == expect


def download_client(port: int, path: str, headers: dict, expect: int | tuple, seconds: float,
                    queue) -> None:
    """GETs ``path`` over and over for ``seconds``; puts (latencies, errors) on ``queue``: an
    answer other than ``expect`` (see ``as_expected``) or a failed connection is an error."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    latencies, errors = [], 0
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        started = time.perf_counter()
        try:
            connection.request("GET", path, headers=headers)
            response = connection.getresponse()
            body = response.read()
        except (OSError, http.client.HTTPException):
            errors += 1
            connection.close()  # the next request connects again
            continue
        latencies.append(time.perf_counter() - started)
        if not as_expected(response, body, expect):
            errors += 1
        if response.headers.get("Connection", "").lower() == "close":
            connection.close()
    queue.put((latencies, errors))


def load_round(port: int, path: str, headers: dict, expect: int | tuple, clients: int,
               seconds: float) -> dict:
    queue = multiprocessing.Queue()
    workers = [multiprocessing.Process(target=download_client,
                                       args=(port, path, headers, expect, seconds, queue))
               for _ in range(clients)]
    started = time.perf_counter()
    for worker in workers:
        worker.start()
    results = [queue.get() for _ in workers]
    elapsed = time.perf_counter() - started
    for worker in workers:
        worker.join()
    latencies = [value for part, _ in results for value in part]
    return {"rps": len(latencies) / elapsed, "requests": len(latencies),
            "errors": sum(errors for _, errors in results),
            "p50": 1000 * percentile(latencies, 0.50), "p99": 1000 * percentile(latencies, 0.99)}


def encode_round(port: int, path: str, count: int) -> dict:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    body = json.dumps({"text": TEXT_10K}).encode()
    headers = {"Content-Type": "application/json"}
    latencies, tokens = [], 0
    for _ in range(count):
        started = time.perf_counter()
        connection.request("POST", path, body, headers)
        response = connection.getresponse()
        answer = response.read()
        latencies.append(time.perf_counter() - started)
        if response.status != 200:
            raise SystemExit(f"encode answered {response.status}: {answer[:300]!r}")
        tokens = len(json.loads(answer)["ids"])
        connection.close()
    return {"p50": 1000 * percentile(latencies, 0.50), "p95": 1000 * percentile(latencies, 0.95),
            "p99": 1000 * percentile(latencies, 0.99), "tokens": tokens, "requests": count}


def first_download(port: int, path: str, headers: dict) -> tuple[str, int]:
    """(ETag, size) of one download, checking that the ETag is the sha256 of the bytes."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    connection.request("GET", path, headers=headers)
    response = connection.getresponse()
    body = response.read()
    if response.status != 200:
        raise SystemExit(f"download answered {response.status}: {body[:300]!r}")
    etag = response.headers["ETag"]
    data = gzip.decompress(body) if response.headers.get("Content-Encoding") == "gzip" else body
    if etag.removeprefix("W/").strip('"') != hashlib.sha256(data).hexdigest():
        raise SystemExit("the ETag is not the sha256 of the bytes")
    return etag, len(body)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokenizer", help="tokenizer files to serve (default: GPT-2's)")
    parser.add_argument("--merges", type=int, help="serve a synthetic tokenizer of N merges")
    parser.add_argument("--workers", type=int, default=3,
                        help="gunicorn sync workers (3, as the Dockerfile runs it)")
    parser.add_argument("--clients", type=int, default=8, help="concurrent download clients")
    parser.add_argument("--seconds", type=float, default=10.0, help="per download round")
    parser.add_argument("--encodes", type=int, default=200, help="encode requests per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--redis", action="store_true",
                        help="count the throttles in a throwaway redis-server, as deployed")
    parser.add_argument("--only", choices=["encode", "downloads"],
                        help="run only the encode requests, or only the downloads")
    options = parser.parse_args()
    gunicorn_path()  # installed, before anything is built
    if options.merges is None and options.tokenizer is None:
        fixtures = Path(os.environ.get("TOKENIZER_FIXTURES", REPO.parent / "shared" / "fixtures"))
        if not (fixtures / "gpt2" / "vocab.json").is_file():
            raise SystemExit(f"no GPT-2 fixture in {fixtures}: give --tokenizer or --merges")
        options.tokenizer = str(fixtures / "gpt2")
    folder = Path(tempfile.mkdtemp(prefix="bench-api-"))
    environment = throwaway_environment(folder)
    server = redis = None
    try:
        if options.redis:
            redis = start_redis(environment)
        started = time.perf_counter()
        setup_registry(environment, options.tokenizer, options.merges)
        served = options.tokenizer or f"a synthetic tokenizer of {options.merges} merges"
        print(f"registry serving {served} built in {time.perf_counter() - started:.1f} s")
        server, port = start_gunicorn(environment, options.workers)
        download = f"/api/tokenizers/{NAME}/versions/production/download?format=hf"
        encode = f"/api/tokenizers/{NAME}/versions/production/encode"
        kinds = ({} if options.only == "encode"
                 else {"plain": {}, "gzip": {"Accept-Encoding": "gzip"}})
        expected = {kind: first_download(port, download, headers)
                    for kind, headers in kinds.items()}
        for _ in range(4 * options.workers):  # every worker renders and loads once
            if kinds:
                first_download(port, download, {})
            encode_round(port, encode, 1)
        with ThreadPoolExecutor(options.workers) as pool:  # as many at once as workers: none
            list(pool.map(lambda _: encode_round(port, encode, 2),  # is left without the
                          range(4 * options.workers)))  # tokenizer (a 1 s load in round 1)
        if kinds:
            print(f"artifact: tokenizer.json of {expected['plain'][1] / 1e6:.2f} MB "
                  f"({expected['gzip'][1] / 1e6:.2f} MB gzipped)")
        print(f"gunicorn {options.workers} sync workers, {options.clients} clients, "
              f"{os.cpu_count()} cores")
        print(f"throttles counted in {'Redis' if redis else 'the file cache'}")
        if kinds:
            print(f"{'round':>5} {'download':>8} {'per s':>6} {'MB/s':>6} {'requests':>8} "
                  f"{'p50 ms':>7} {'p99 ms':>7} {'errors':>6} {'server CPU ms/request':>21}")
        loads = {kind: [] for kind in kinds}
        encodes = []
        for index in range(options.rounds):
            for kind, headers in kinds.items():
                etag, size = expected[kind]
                loaded = server_cpu_ms(server, load_round, port, download, headers,
                                       (200, etag, size), options.clients, options.seconds)
                loads[kind].append(loaded)
                print(f"{index + 1:>5} {kind:>8} {loaded['rps']:6.0f} "
                      f"{loaded['rps'] * size / 1e6:6.0f} {loaded['requests']:8d} "
                      f"{loaded['p50']:7.1f} {loaded['p99']:7.1f} {loaded['errors']:6d} "
                      f"{loaded['cpu_ms']:21.2f}")
            if options.only == "downloads":
                continue
            encodes.append(server_cpu_ms(server, encode_round, port, encode, options.encodes))
            print(f"{index + 1:>5} encode 10 KB ({len(TEXT_10K.encode())} bytes, "
                  f"{encodes[-1]['tokens']} tokens), one after another: p50 "
                  f"{encodes[-1]['p50']:.1f} ms, p95 {encodes[-1]['p95']:.1f} ms, p99 "
                  f"{encodes[-1]['p99']:.1f} ms, server CPU {encodes[-1]['cpu_ms']:.2f} "
                  f"ms/request")
        print(f"spread over {options.rounds} rounds:")
        for kind, rounds in loads.items():
            rps, p99 = [r["rps"] for r in rounds], [r["p99"] for r in rounds]
            cpu = [r["cpu_ms"] for r in rounds]
            met = min(rps) >= 500 and max(p99) < 50
            print(f"  {kind:>5} downloads {min(rps):.0f}-{max(rps):.0f}/s (median "
                  f"{statistics.median(rps):.0f}), p99 {min(p99):.1f}-{max(p99):.1f} ms, server "
                  f"CPU {min(cpu):.2f}-{max(cpu):.2f} ms/request; goal (>= 500/s, p99 < 50 ms "
                  f"in every round) {'met' if met else 'not met'}")
        if not encodes:
            return
        p50, p95 = [e["p50"] for e in encodes], [e["p95"] for e in encodes]
        p99, cpu = [e["p99"] for e in encodes], [e["cpu_ms"] for e in encodes]
        met = max(p50) < 3 and max(cpu) < 2
        print(f"  encode 10 KB: p50 {min(p50):.1f}-{max(p50):.1f} ms, "
              f"p95 {min(p95):.1f}-{max(p95):.1f} ms, p99 {min(p99):.1f}-{max(p99):.1f} ms, "
              f"server CPU {min(cpu):.2f}-{max(cpu):.2f} ms/request; goal (p50 < 3 ms, CPU < 2 "
              f"ms/request in every round) {'met' if met else 'not met'}")
    finally:
        stop_server(server)
        stop_server(redis)
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
