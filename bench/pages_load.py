"""The dashboard under load: the home page, a version page, the compare page and the download
endpoint served by gunicorn with 20 versions in the database, in requests/s and p99.

    python bench/pages_load.py [--clients 8] [--seconds 10] [--rounds 3] [--workers 3]

Sets up a throwaway registry (SQLite, media and static files in a temporary directory, ``DEBUG``
off, so ``collectstatic`` runs first): two held-out evaluation corpora of prose and one training
corpus (Python's own help topics, about 460 KB in all), and one training run of ``load-pages``
to a vocab of 5,250 with a sweep of 19 smaller sizes, made here as a worker would (nothing is
sent to a broker), which gives 20 versions of 243 to 4,993 merges; every version is evaluated on
both corpora (40 evaluations), so every page has its numbers. Then gunicorn (``--workers`` sync
workers, as ``bench/api_load.py`` starts it) serves it on a free loopback port and each page in
turn is requested over and over for ``--seconds`` by ``--clients`` client processes, each page
once per round:

- ``/``, the leaderboard (40 evaluations ranked per corpus, runs);
- ``/tokenizers/load-pages/20/``, the largest version with its metrics, lineage and downloads;
- ``/compare/?versions=...&corpus=...``, four versions of the sweep on one corpus (every metric,
  charts, the sweep curve, the words they split differently);
- ``/api/tokenizers/load-pages/versions/20/download?format=hf``, its ``tokenizer.json``.

Every answer must be 200 (the download's also with the ETag and size of the first), anything
else or a failed connection counts as an error. It prints requests per second and the latency
percentiles per page and round, then the spread over the rounds, and exits with status 1 if any
request failed. The load generator shares the machine with the server, so the figures are a
floor. Needs gunicorn (``pip install -e '.[bench]'``).
"""

from __future__ import annotations

import argparse
import http.client
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.api_load import (  # noqa: E402
    first_download,
    gunicorn_path,
    load_round,
    start_gunicorn,
    stop_server,
    throwaway_environment,
)

NAME = "load-pages"
VOCAB_SIZES = [500 + 250 * index for index in range(20)]  # the run's and its sweep's
TRAINING_CHARS = 300_000
EVALUATION_CORPORA = ("held-out-a", "held-out-b")
COMPARED = (1, 7, 14, 20)  # version numbers on the compare page


def build_registry() -> None:
    """Migrate, collect the static files, and make the corpora, the 20 versions and their
    evaluations, here (run in a child process with the throwaway registry's environment)."""
    import io
    from pydoc_data.topics import topics
    from unittest import mock

    import django

    django.setup()
    from registry.local_dirs import ensure_local_dirs  # noqa: E402  (a fresh checkout has no var/)
    ensure_local_dirs()
    from django.core.management import call_command

    from tokenizers_app.models import Evaluation, TokenizerVersion
    from tokenizers_app.services.corpora import import_corpus
    from tokenizers_app.services.evaluations import run_evaluation
    from tokenizers_app.services.runs import execute_training_run, start_training_run

    call_command("migrate", verbosity=0)
    call_command("collectstatic", interactive=False, verbosity=0)
    prose = "".join(topics[key] for key in sorted(topics))
    held_out = prose[TRAINING_CHARS:]
    half = len(held_out) // 2
    started = time.perf_counter()
    # Nothing is sent to a broker: the run and the evaluations are computed here.
    with mock.patch("celery.app.task.Task.apply_async"):
        for name, text in zip(EVALUATION_CORPORA, (held_out[:half], held_out[half:]), strict=True):
            import_corpus(stream=io.BytesIO(text.encode()), name=name, is_evaluation=True)
        corpus = import_corpus(stream=io.BytesIO(prose[:TRAINING_CHARS].encode()),
                               name="training-prose")
        run = start_training_run(corpora=[corpus], tokenizer_name=NAME,
                                 vocab_size=VOCAB_SIZES[-1], special_tokens=["<|endoftext|>"],
                                 sweep=VOCAB_SIZES[:-1])
        execute_training_run(run_id=run.pk)
        run.refresh_from_db()
        trained = time.perf_counter() - started
        for evaluation in Evaluation.objects.order_by("pk"):
            run_evaluation(evaluation_id=evaluation.pk)
    versions = TokenizerVersion.objects.filter(tokenizer__name=NAME).order_by("number")
    evaluations = Evaluation.objects.filter(status=Evaluation.Status.SUCCEEDED).count()
    wanted = len(VOCAB_SIZES) * len(EVALUATION_CORPORA)
    if run.status != run.Status.SUCCEEDED or len(versions) != len(VOCAB_SIZES) or \
            evaluations != wanted:
        raise SystemExit(f"the registry is not as planned: run {run.status} {run.error!r}, "
                         f"{len(versions)} versions, {evaluations} of {wanted} evaluations")
    print(f"registry: {len(versions)} versions of {NAME} ({versions[0].merge_count} to "
          f"{versions[len(versions) - 1].merge_count} merges; one run on "
          f"{len(prose[:TRAINING_CHARS].encode()) / 1e3:.0f} KB of prose and its sweep, "
          f"{trained:.1f} s), {len(EVALUATION_CORPORA)} evaluation corpora, {evaluations} "
          f"evaluations ({time.perf_counter() - started - trained:.1f} s)")


def get(port: int, path: str) -> tuple[int, bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def pages() -> dict[str, str]:
    refs = ",".join(f"{NAME}@{number}" for number in COMPARED)
    return {"home": "/", "version": f"/tokenizers/{NAME}/{len(VOCAB_SIZES)}/",
            "compare": f"/compare/?versions={refs}&corpus={EVALUATION_CORPORA[0]}",
            "download": f"/api/tokenizers/{NAME}/versions/{len(VOCAB_SIZES)}/download?format=hf"}


def expected_answers(port: int, workers: int) -> dict[str, tuple[int | tuple, int]]:
    """Per page: what every answer must be (a status, or the download's status, ETag and size)
    and its size; each page is requested a few times first, so every worker has loaded it."""
    answers = {}
    for page, path in pages().items():
        for _ in range(4 * workers):
            if page == "download":
                etag, size = first_download(port, path, {})
                answers[page] = ((200, etag, size), size)
            else:
                status, body = get(port, path)
                if status != 200:
                    raise SystemExit(f"{path} answered {status}: {body[:300]!r}")
                answers[page] = (200, len(body))
    if b"computing" in get(port, pages()["compare"])[1]:
        raise SystemExit("the compare page has no numbers yet")
    return answers


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=3,
                        help="gunicorn sync workers (3, as the Dockerfile runs it)")
    parser.add_argument("--clients", type=int, default=8, help="concurrent client processes")
    parser.add_argument("--seconds", type=float, default=10.0, help="per page and round")
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    gunicorn_path()  # installed, before anything is built
    folder = Path(tempfile.mkdtemp(prefix="bench-pages-load-"))
    environment = {key: value for key, value in throwaway_environment(folder).items()
                   if key not in ("CELERY_BROKER_URL", "CACHE_URL")}  # no shared broker, cache
    environment["STATIC_ROOT"] = str(folder / "static")
    server = None
    try:
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c",
                        "from bench.pages_load import build_registry; build_registry()"],
                       env=environment, cwd=REPO, check=True)
        print(f"built (migrate, collectstatic, corpora, versions, evaluations) in "
              f"{time.perf_counter() - started:.1f} s")
        server, port = start_gunicorn(environment, options.workers)
        answers = expected_answers(port, options.workers)
        print(f"gunicorn {options.workers} sync workers, {options.clients} clients, "
              f"{os.cpu_count()} cores, {options.rounds} round(s) of {options.seconds:g} s "
              f"per page")
        for page, path in pages().items():
            print(f"  {page:<8} {answers[page][1] / 1e3:7.1f} KB  {path}")
        print(f"{'round':>5} {'page':<8} {'per s':>6} {'requests':>8} {'p50 ms':>7} "
              f"{'p99 ms':>7} {'errors':>6}")
        loads: dict[str, list[dict]] = {page: [] for page in pages()}
        for index in range(options.rounds):
            for page, path in pages().items():
                loaded = load_round(port, path, {}, answers[page][0], options.clients,
                                    options.seconds)
                loads[page].append(loaded)
                print(f"{index + 1:>5} {page:<8} {loaded['rps']:6.0f} {loaded['requests']:8d} "
                      f"{loaded['p50']:7.1f} {loaded['p99']:7.1f} {loaded['errors']:6d}")
        print(f"spread over {options.rounds} round(s):")
        for page, rounds in loads.items():
            rps, p99 = [r["rps"] for r in rounds], [r["p99"] for r in rounds]
            print(f"  {page:<8} {min(rps):.0f}-{max(rps):.0f} requests/s (median "
                  f"{statistics.median(rps):.0f}), p99 {min(p99):.1f}-{max(p99):.1f} ms, "
                  f"errors {sum(r['errors'] for r in rounds)}")
        requests = sum(r["requests"] for rounds in loads.values() for r in rounds)
        errors = sum(r["errors"] for rounds in loads.values() for r in rounds)
        print(f"errors: {errors} of {requests} requests" + (" (none)" if not errors else ""))
    finally:
        stop_server(server)
        shutil.rmtree(folder, ignore_errors=True)
    if errors:
        sys.exit(1)


if __name__ == "__main__":
    main()
