"""Bounded work under load: pattern-heavy encodes beside ordinary ones, against gunicorn as the
Dockerfile runs it (its ``CMD``: 3 workers of 4 threads each, and its ``ENV``).

    python bench/load.py [--seconds 30] [--heavy 12] [--normal 12] [--text-chars 200000]
                         [--moderate 1] [--moderate-chars 20000]

Sets up a throwaway registry (SQLite and media in a temporary directory, ``DEBUG`` off, static
files collected) holding two versions: ``normal@1`` (2,000 merges, pattern gpt2) and
``quadratic@1``, the same merges with the custom pattern ``[^\\n]*\\n|[\\s\\S]``, written straight
through the service that adds versions (as a version stored before patterns were tried on
adversarial text): on a line without a newline every match scans to the end of the text, so
splitting ``--text-chars`` characters of it takes time quadratic in their number. Two phases of
``--seconds`` each:

1. *peer*: ``--normal`` clients encode a 1.1 KB text with ``normal@1``, one request after
   another, and ``--moderate`` clients ``--moderate-chars`` characters with ``quadratic@1`` (a
   few tenths of a second of processor time alone: the issue's 14,000-character encode that got
   422 for the other requests' CPU), while one prober asks ``/health`` (and another
   ``/tokenizers/``) every 0.1 s;
2. *load*: the same, plus ``--heavy`` clients that each post ``--text-chars`` characters without
   a newline to ``quadratic@1`` over and over: each is answered 422 once it has spent the
   request's ``WEB_MATCH_SECONDS`` of its own thread's processor time, or 429 at once when the
   process's slots for splitting with custom patterns (``WEB_MATCH_SLOTS``,
   ``WEB_MATCH_QUEUE``) are taken.

It prints, per phase, the normal encodes served (and any that were not 200), the moderate ones
by status (200, or 429 when the slots are taken; a 422 would be other requests' CPU counted
against it), the heavy answers by status, the latency percentiles of every kind of request, of
``/health`` and of ``/tokenizers/``, and the load average of the machine before, between and
after. Exit status 1 when a normal encode or a probe was not answered 200, a moderate one was
answered 422 (or anything but 200 or 429), or a heavy one other than 422, 429 (or 200, for a
text short enough to split within the budget); the p99 of ``/health`` is printed against its
1 s goal, not enforced (the load generator, and whatever else runs on the machine, share its
cores with the server). Needs gunicorn (``pip install -e '.[bench]'``).
"""

from __future__ import annotations

import argparse
import collections
import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.api_load import (  # noqa: E402
    free_port,
    gunicorn_path,
    percentile,
    stop_server,
    throwaway_environment,
    wait_for,
)

QUADRATIC = r"[^\n]*\n|[\s\S]"
NORMAL_TEXT = ("The registry keeps every version; compression is bytes per token. "
               "def encode(self, text): return [t for t in text]  # ids\n") * 9
PROBE_EVERY = 0.1  # seconds between two probes of one prober
DOCKERFILE = REPO / "Dockerfile"


def build_registry() -> None:
    """Migrate, collect the static files, and add the two versions (run in a child process with
    the throwaway registry's environment)."""
    import django

    django.setup()
    from registry.local_dirs import ensure_local_dirs  # noqa: E402  (a fresh checkout has no var/)
    ensure_local_dirs()
    from django.core.management import call_command

    from bench.db_roundtrip import synthetic_tokenizer
    from tokenizers_app.bpe import Tokenizer as CoreTokenizer
    from tokenizers_app.models import Tokenizer, TokenizerVersion
    from tokenizers_app.services.versions import add_version

    call_command("migrate", verbosity=0)
    call_command("collectstatic", interactive=False, verbosity=0)
    core = synthetic_tokenizer(2_000)
    quadratic = CoreTokenizer(core.vocab, core.merges, core.special_tokens, QUADRATIC,
                              core.merge_counts)
    for name, version in (("normal", core), ("quadratic", quadratic)):
        add_version(tokenizer=Tokenizer.objects.create(name=name), core=version,
                    source=TokenizerVersion.Source.IMPORT, source_detail="bench/load.py")


def dockerfile_command(port: int) -> list[str]:
    """The Dockerfile's ``CMD``, bound to a loopback port, with this environment's gunicorn."""
    [cmd] = re.findall(r"^CMD (\[.*\])$", DOCKERFILE.read_text(), re.M)
    command = json.loads(cmd)
    command[0] = gunicorn_path()
    command[command.index("--bind") + 1] = f"127.0.0.1:{port}"
    return command


def dockerfile_env() -> dict[str, str]:
    """The Dockerfile's ``ENV`` lines, without its paths (the throwaway registry has its own)."""
    import shlex

    env = {}
    for line in re.findall(r"^ENV (.*)$", DOCKERFILE.read_text(), re.M):
        env.update(part.split("=", 1) for part in shlex.split(line))
    return {k: v for k, v in env.items() if k not in ("STATIC_ROOT", "MEDIA_ROOT",
                                                       "REGISTRY_VAR_DIR")}


def request(port: int, method: str, path: str, body: bytes | None = None) -> tuple[int, float]:
    """(status, seconds) of one request on a new connection; status 0 when it failed."""
    started = time.perf_counter()
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        headers = {"Content-Type": "application/json"} if body is not None else {}
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        response.read()
        status = response.status
    except (OSError, http.client.HTTPException):
        status = 0
    finally:
        connection.close()
    return status, time.perf_counter() - started


class Recorder:
    """Answers and latencies by kind of client, from every client thread."""

    def __init__(self):
        self.lock = threading.Lock()
        self.statuses: dict[str, collections.Counter] = collections.defaultdict(
            collections.Counter)
        self.seconds: dict[str, list[float]] = collections.defaultdict(list)

    def add(self, kind: str, status: int, seconds: float) -> None:
        with self.lock:
            self.statuses[kind][status] += 1
            self.seconds[kind].append(seconds)


def client(port: int, kind: str, path: str, body: bytes | None, until: float,
           recorder: Recorder, pause: float = 0.0) -> None:
    while time.monotonic() < until:
        status, seconds = request(port, "POST" if body is not None else "GET", path, body)
        recorder.add(kind, status, seconds)
        if pause:
            time.sleep(pause)


def phase(port: int, seconds: float, normal: int, heavy: int, text_chars: int, moderate: int,
          moderate_chars: int) -> Recorder:
    recorder, until = Recorder(), time.monotonic() + seconds
    quadratic = "/api/tokenizers/quadratic/versions/1/encode"
    clients = [("normal", "/api/tokenizers/normal/versions/1/encode",
                json.dumps({"text": NORMAL_TEXT}).encode(), normal),
               ("moderate", quadratic, json.dumps({"text": "a" * moderate_chars}).encode(),
                moderate),
               ("heavy", quadratic, json.dumps({"text": "a" * text_chars}).encode(), heavy)]
    threads = [threading.Thread(target=client, args=(port, kind, path, body, until, recorder))
               for kind, path, body, count in clients for _ in range(count)]
    threads += [threading.Thread(target=client, args=(port, probe, path, None, until, recorder,
                                                      PROBE_EVERY))
                for probe, path in (("/health", "/health"), ("/tokenizers/", "/tokenizers/"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return recorder


def report(name: str, recorder: Recorder, seconds: float) -> list[str]:
    """Print a phase's figures; return what was wrong in it."""
    wrong = []
    print(f"phase {name}:")
    for kind in ("normal", "moderate", "heavy", "/health", "/tokenizers/"):
        if kind not in recorder.statuses:
            continue
        statuses, times = recorder.statuses[kind], recorder.seconds[kind]
        answered = ", ".join(f"{count} x {status or 'failed'}"
                             for status, count in sorted(statuses.items()))
        print(f"  {kind:<13} {len(times):6d} requests ({len(times) / seconds:6.1f}/s): "
              f"{answered}; p50 {1000 * percentile(times, 0.5):7.0f} ms, p90 "
              f"{1000 * percentile(times, 0.9):7.0f} ms, p99 {1000 * percentile(times, 0.99):7.0f}"
              f" ms, max {1000 * max(times):7.0f} ms")
        allowed = {"heavy": {200, 422, 429}, "moderate": {200, 429}}.get(kind, {200})
        if set(statuses) - allowed:
            wrong.append(f"{kind}: {dict(statuses)}")
    if "/health" in recorder.seconds:
        p99 = percentile(recorder.seconds["/health"], 0.99)
        print(f"  /health p99 {1000 * p99:.0f} ms: {'under' if p99 < 1 else 'OVER'} the 1 s goal")
    return wrong


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f} (1, 5, 15 min) on {os.cpu_count()} cores"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="per phase")
    parser.add_argument("--heavy", type=int, default=12, help="clients on the quadratic pattern")
    parser.add_argument("--normal", type=int, default=12, help="clients on the normal version")
    parser.add_argument("--text-chars", type=int, default=200_000,
                        help="characters each heavy request sends (API_ENCODE_MAX_CHARS: 200,000)")
    parser.add_argument("--moderate", type=int, default=1,
                        help="clients of a custom-pattern encode that fits the budget")
    parser.add_argument("--moderate-chars", type=int, default=20_000,
                        help="characters each moderate request sends")
    options = parser.parse_args()
    gunicorn_path()  # installed, before anything is built
    folder = Path(tempfile.mkdtemp(prefix="bench-load-"))
    environment = {**{key: value for key, value in throwaway_environment(folder).items()
                      if key not in ("CELERY_BROKER_URL", "CACHE_URL")},
                   **dockerfile_env(), "STATIC_ROOT": str(folder / "static")}
    server, wrong = None, []
    try:
        subprocess.run([sys.executable, "-c", "from bench.load import build_registry; "
                                              "build_registry()"],
                       env=environment, cwd=REPO, check=True)
        port = free_port()
        command = dockerfile_command(port)
        server = subprocess.Popen(command + ["--log-level", "warning"], env=environment,
                                  cwd=REPO)
        wait_for(port, server)
        for path in ("/api/tokenizers/normal/versions/1/encode",
                     "/api/tokenizers/quadratic/versions/1/encode"):
            for _ in range(6):  # every worker process loads both versions before timing
                request(port, "POST", path, json.dumps({"text": "warm up\n"}).encode())
        print(f"gunicorn as the Dockerfile runs it: {' '.join(command[1:])}")
        print(f"settings: WEB_MATCH_SECONDS {environment.get('WEB_MATCH_SECONDS', '2')}, "
              f"WEB_MATCH_SLOTS {environment.get('WEB_MATCH_SLOTS', '1')}, WEB_MATCH_QUEUE "
              f"{environment.get('WEB_MATCH_QUEUE', '1')}; heavy text {options.text_chars:,} "
              f"characters, moderate text {options.moderate_chars:,}, normal text "
              f"{len(NORMAL_TEXT):,}")
        print(f"load average before: {load_average()}")
        sizes = (options.text_chars, options.moderate, options.moderate_chars)
        peer = phase(port, options.seconds, options.normal, 0, *sizes)
        wrong += report(f"peer ({options.normal} normal + {options.moderate} moderate clients, "
                        f"{options.seconds:g} s)", peer, options.seconds)
        print(f"load average between: {load_average()}")
        loaded = phase(port, options.seconds, options.normal, options.heavy, *sizes)
        wrong += report(f"load ({options.normal} normal + {options.moderate} moderate + "
                        f"{options.heavy} quadratic clients, {options.seconds:g} s)", loaded,
                        options.seconds)
        print(f"load average after: {load_average()}")
        served = (loaded.statuses["normal"][200], peer.statuses["normal"][200])
        print(f"normal encodes served under load: {served[0]} ({served[0] / max(1, served[1]):.2f}"
              f" x the peer phase's {served[1]})")
        health = (percentile(loaded.seconds["/health"], 0.99),
                  percentile(peer.seconds["/health"], 0.99))
        print(f"/health p99 under load: {1000 * health[0]:.0f} ms "
              f"({health[0] / max(health[1], 1e-6):.1f} x the peer phase's "
              f"{1000 * health[1]:.0f} ms)")
    finally:
        stop_server(server)
        shutil.rmtree(folder, ignore_errors=True)
    if wrong:
        raise SystemExit(f"answers other than expected: {'; '.join(wrong)}")


if __name__ == "__main__":
    main()
