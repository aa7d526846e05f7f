"""The encode request end to end in one process, under cProfile: what a 10 KB encode costs.

    python bench/encode_profile.py [--tokenizer PATH | --merges N] [--requests 300] [--top 25]

Builds the same throwaway registry as ``bench/api_load.py`` (GPT-2 aliased ``production``,
``DEBUG`` off, throttles lifted but counted), then calls the deployment's WSGI application
(``registry.wsgi``) with the bench's 10 KB POST ``--requests`` times in a loop: middleware,
authentication, throttle, the version lookup, the body's parse and validation, the encode and
the answer's JSON. Prints the time per request without the profiler, then the profile's top
entries by own time and by cumulative time (the share of the whole loop).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.api_load import NAME, TEXT_10K, setup_registry, throwaway_environment  # noqa: E402


def wsgi_environ(path: str, body: bytes) -> dict:
    return {"REQUEST_METHOD": "POST", "PATH_INFO": path, "SCRIPT_NAME": "", "QUERY_STRING": "",
            "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(len(body)),
            "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "8000", "HTTP_HOST": "127.0.0.1",
            "REMOTE_ADDR": "127.0.0.1", "SERVER_PROTOCOL": "HTTP/1.1",
            "wsgi.input": io.BytesIO(body), "wsgi.url_scheme": "http", "wsgi.errors": sys.stderr,
            "wsgi.multithread": False, "wsgi.multiprocess": True, "wsgi.run_once": False,
            "wsgi.version": (1, 0)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokenizer", help="tokenizer files to serve (default: GPT-2's)")
    parser.add_argument("--merges", type=int, help="serve a synthetic tokenizer of N merges")
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--top", type=int, default=25)
    options = parser.parse_args()
    if options.merges is None and options.tokenizer is None:
        fixtures = Path(os.environ.get("TOKENIZER_FIXTURES", REPO.parent / "shared" / "fixtures"))
        options.tokenizer = str(fixtures / "gpt2")
    folder = Path(tempfile.mkdtemp(prefix="bench-profile-"))
    try:
        environment = throwaway_environment(folder)
        setup_registry(environment, options.tokenizer, options.merges)
        os.environ.update(environment)
        from registry.wsgi import application

        path = f"/api/tokenizers/{NAME}/versions/production/encode"
        body = json.dumps({"text": TEXT_10K}).encode()
        status = []

        def call() -> bytes:
            chunks = application(wsgi_environ(path, body), lambda s, h, e=None: status.append(s))
            answer = b"".join(chunks)
            chunks.close()
            return answer

        answer = call()
        if not status[-1].startswith("200"):
            raise SystemExit(f"encode answered {status[-1]}: {answer[:300]!r}")
        for _ in range(20):
            call()
        started = time.perf_counter()
        for _ in range(options.requests):
            call()
        plain = (time.perf_counter() - started) / options.requests
        print(f"{len(json.loads(answer)['ids'])} tokens, {len(answer)} bytes answered; "
              f"{1000 * plain:.2f} ms per request without the profiler")
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(options.requests):
            call()
        profile.disable()
        for order in ("tottime", "cumulative"):
            out = io.StringIO()
            pstats.Stats(profile, stream=out).sort_stats(order).print_stats(options.top)
            print(out.getvalue())
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
