"""Server time and queries of every dashboard page, with a registry of realistic size.

    python bench/pages.py [--repeat 5]
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres python bench/pages.py

Builds a throwaway test database (SQLite, or Postgres with DATABASE_URL) holding 5 evaluation
corpora and 20 versions, two of them with 100,000 merges (synthetic, valid), every version
evaluated on every corpus (100 evaluations, computed here), then requests each page in this
process (Django's test client: the time is the server's, no network) ``--repeat`` times after
one warm-up request, and prints the median and the slowest time and the query count per page.
Goal: every page under 300 ms, and the playground's 20,000 characters in two versions (POSTed)
under 1 s; ``cpu ms`` is the median CPU time of the thread that served the page (what a busy
machine does not inflate), ``KB`` the size of the HTML. The database is dropped at the end.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "registry.settings")
os.environ.setdefault("DEBUG", "1")  # as manage.py on a machine with no environment
os.environ.setdefault("MEDIA_ROOT", tempfile.mkdtemp(prefix="bench-pages-media-"))

import django  # noqa: E402

django.setup()
from registry.local_dirs import ensure_local_dirs  # noqa: E402  (a fresh checkout has no var/)
ensure_local_dirs()

from django.conf import settings  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext, setup_test_environment  # noqa: E402

from bench.db_roundtrip import synthetic_tokenizer  # noqa: E402
from tokenizers_app.models import Evaluation, Tokenizer, TokenizerVersion  # noqa: E402
from tokenizers_app.services.corpora import import_corpus  # noqa: E402
from tokenizers_app.services.evaluations import run_evaluation  # noqa: E402
from tokenizers_app.services.versions import add_version  # noqa: E402

GOAL_MS = 300
PLAYGROUND_GOAL_MS = 1000  # 20,000 characters in two versions (issue 19)


def prose(chars: int, offset: int) -> str:
    from pydoc_data.topics import topics

    text = "".join(topics[key] for key in sorted(topics))
    return (text * 2)[offset:offset + chars]


def build_registry() -> list[TokenizerVersion]:
    for index in range(5):
        import_corpus(stream=io.BytesIO(prose(40_000, 50_000 * index).encode()),
                      name=f"held-out-{index}", is_evaluation=True)
    sizes = [100_000, 100_000] + [2_000 * (i + 1) for i in range(18)]
    versions = []
    for index, merges in enumerate(sizes):
        with transaction.atomic():
            record, _ = Tokenizer.objects.get_or_create(name=f"bench-{index // 5}")
            versions.append(add_version(tokenizer=record, core=synthetic_tokenizer(merges, index),
                                        source=TokenizerVersion.Source.IMPORT))
    for evaluation in Evaluation.objects.order_by("pk"):
        run_evaluation(evaluation_id=evaluation.pk)
    return versions


def pages(versions: list[TokenizerVersion]) -> list:
    """The URLs to GET, and ``(name, form)`` to POST to the playground."""
    big, other = versions[0], versions[5]
    refs = f"{big.label},{other.label}"
    base = f"/tokenizers/{big.tokenizer.name}/{big.number}"
    return ["/", "/corpora/", "/corpora/held-out-0/", "/runs/", f"/tokenizers/{big.tokenizer.name}/",
            f"{base}/", f"{base}/vocab/", f"{base}/vocab/?q=ab", f"{base}/merges/?page=500",
            f"{base}/tokens/{big.vocab_size - 1}/",
            f"/compare/?versions={refs}&corpus=held-out-0",
            f"/playground/?versions={refs}&text=" + "Hello, tokenizers! " * 50,
            ("/playground/ (POST 20,000 characters)", {"versions": refs, "text": prose(20_000, 0)})]


def measure(client: Client, url, repeat: int) -> tuple[float, float, float, int, int]:
    if isinstance(url, tuple):  # the playground's form, POSTed
        form = url[1]
        get = lambda: client.post("/playground/", form)  # noqa: E731
    else:
        get = lambda: client.get(url)  # noqa: E731
    get()  # warm-up: the per-process tokenizer cache, template loading
    times, cpu, queries = [], [], 0
    for _ in range(repeat):
        with CaptureQueriesContext(connection) as captured:
            started, started_cpu = time.perf_counter(), time.thread_time()
            response = get()
            times.append(1000 * (time.perf_counter() - started))
            cpu.append(1000 * (time.thread_time() - started_cpu))
        if response.status_code != 200:
            raise SystemExit(f"{url} answered {response.status_code}")
        queries = len(captured)
    return (statistics.median(times), max(times), statistics.median(cpu), queries,
            len(response.content))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    setup_test_environment()
    settings.ALLOWED_HOSTS = ["testserver"]
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        started = time.perf_counter()
        versions = build_registry()
        print(f"built 5 evaluation corpora, {len(versions)} versions (two of 100,000 merges) and "
              f"{Evaluation.objects.count()} evaluations in {time.perf_counter() - started:.0f} s "
              f"on {connection.vendor}")
        client = Client()
        print(f"{'page':<72} {'median ms':>9} {'max ms':>7} {'cpu ms':>7} {'queries':>7} "
              f"{'KB':>7}")
        slow = []
        for url in pages(versions):
            median, most, cpu, queries, size = measure(client, url, options.repeat)
            name = url[0] if isinstance(url, tuple) else url
            print(f"{name[:72]:<72} {median:9.1f} {most:7.1f} {cpu:7.1f} {queries:7d} "
                  f"{size / 1000:7.0f}")
            if most > (PLAYGROUND_GOAL_MS if isinstance(url, tuple) else GOAL_MS):
                slow.append(name)
        print(f"goal: every page under {GOAL_MS} ms, the playground with 20,000 characters under "
              f"{PLAYGROUND_GOAL_MS} ms: "
              + ("met" if not slow else f"not met by {len(slow)} page(s)"))
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
