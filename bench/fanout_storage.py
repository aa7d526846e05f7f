"""Fan-out training of one corpus on two workers, with the registry's files on local disk and
in an S3 bucket, measured in the same run.

    python bench/fanout_storage.py [--corpus ../bench-corpora/en_100M.txt] [--repeat 3]
                                   [--vocab-size 512] [--workers 2]

For each repeat and each store it sets up a throwaway registry (SQLite, the broker kept in
files, ``DEBUG`` off; a measurement is a process of its own, as settings are read once), imports
the corpus (``import_corpus``: streamed to the store), starts ``--workers`` Celery workers
(``--concurrency=1`` each) and one run, and waits for it. The corpus is over
``FANOUT_MIN_BYTES`` (64 MB), so its counting is fanned out in parts of ``FANOUT_PART_BYTES``
(16 MB) over the workers. With the bucket (a SeaweedFS server started for the bench: the
``weed`` binary of the test dependencies, on loopback ports of its own) each worker has a
``MEDIA_ROOT`` of its own and reads only its parts' byte ranges; on local disk they share one.
It prints, per measurement, the import's MB/s, the run's counting seconds (plan, count tasks and
the merge task's summing: the part that reads the store) and its wall seconds, then the ratio
bucket / local disk of each repeat and their spread (min-max). Each run must succeed with one
version, and both stores must learn the same merges; it exits with status 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.runs_load import FOREIGN, Worker, throwaway_environment  # noqa: E402

DEFAULT_CORPUS = REPO.parent / "bench-corpora" / "en_100M.txt"


def measure(store: str, corpus_path: Path, vocab_size: int, workers: int) -> dict:
    """One measurement, in this process (``--one``): the store's settings are in the
    environment already."""
    folder = Path(tempfile.mkdtemp(prefix=f"bench-fanout-{store}-"))
    environment = throwaway_environment(folder)
    environment.update({k: v for k, v in os.environ.items()
                        if k.startswith(("STORAGE_", "AWS_", "FANOUT_"))})
    for key in FOREIGN:
        os.environ.pop(key, None)
    os.environ.update(environment)
    import django

    django.setup()
    from django.core.management import call_command

    from registry.local_dirs import ensure_local_dirs
    from tokenizers_app.models import TrainingRun
    from tokenizers_app.services.corpora import import_corpus
    from tokenizers_app.services.runs import start_training_run

    running: list[Worker] = []
    try:
        ensure_local_dirs()
        call_command("migrate", verbosity=0)
        started = time.monotonic()
        with open(corpus_path, "rb") as stream:
            corpus = import_corpus(stream=stream, name="bench")
        imported = time.monotonic() - started
        for index in range(workers):
            own = dict(environment)
            if store == "s3":  # nothing shared but the database, the broker and the bucket
                own["MEDIA_ROOT"] = str(folder / f"worker-{index + 1}-media")
            running.append(Worker(f"fanout-{index + 1}", own, folder))
        for worker in running:
            worker.wait_ready(time.monotonic() + 120)
        run = start_training_run(corpora=[corpus], tokenizer_name="bench",
                                 vocab_size=vocab_size)
        submitted = time.monotonic()
        while not TrainingRun.objects.get(pk=run.pk).is_finished:
            if all(worker.process.poll() is not None for worker in running):
                raise SystemExit("every worker exited")
            time.sleep(0.2)
        wall = time.monotonic() - submitted
        run.refresh_from_db()
        if run.status != TrainingRun.Status.SUCCEEDED:
            raise SystemExit(f"the run {run.status}: {run.error}")
        version = run.versions.get()
        return {"store": store, "import_mb_s": corpus.size_bytes / 1e6 / imported,
                "count_s": run.stage_seconds.get("count", 0.0), "wall_s": wall,
                "parts": run.fanout_parts, "merges_digest": version.digest}
    finally:
        for worker in running:
            worker.stop()
        shutil.rmtree(folder, ignore_errors=True)


def one(store: str, env: dict, options) -> dict:
    command = [sys.executable, __file__, "--one", store, "--corpus", str(options.corpus),
               "--vocab-size", str(options.vocab_size), "--workers", str(options.workers)]
    answer = subprocess.run(command, env={**os.environ, **env}, capture_output=True,
                            text=True, timeout=3600)
    if answer.returncode != 0:
        raise SystemExit(f"the {store} measurement failed:\n{answer.stderr[-3000:]}")
    return json.loads(answer.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--vocab-size", type=int, default=512)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--one", choices=["local", "s3"], help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.one:
        print(json.dumps(measure(options.one, options.corpus, options.vocab_size,
                                 options.workers)))
        return
    from tests.storage.weed import Weed

    weed = Weed(Path(tempfile.mkdtemp(prefix="bench-weed-"))).start()
    print(f"{options.corpus.name}: {options.corpus.stat().st_size / 1e6:.0f} MB, "
          f"{options.workers} workers, vocab {options.vocab_size}; load average "
          f"{os.getloadavg()[0]:.2f}")
    ratios, digests = [], set()
    try:
        for repeat in range(options.repeat):
            results = {}
            for store in ("local", "s3"):
                env = weed.env(weed.new_bucket(), prefix="bench") if store == "s3" else {}
                results[store] = result = one(store, env, options)
                digests.add(result["merges_digest"])
                print(f"  {repeat + 1}. {store:<5} import {result['import_mb_s']:6.1f} MB/s, "
                      f"{result['parts']} parts, counting {result['count_s']:6.1f} s, "
                      f"run {result['wall_s']:6.1f} s")
            ratio = results["s3"]["wall_s"] / results["local"]["wall_s"]
            count = results["s3"]["count_s"] / results["local"]["count_s"]
            ratios.append((ratio, count))
            print(f"     bucket / local disk: run {ratio:.2f}, counting {count:.2f}")
    finally:
        weed.stop()
        shutil.rmtree(weed.folder, ignore_errors=True)
    runs, counts = [r for r, _ in ratios], [c for _, c in ratios]
    print(f"bucket / local disk over {len(ratios)} repeats: run {sorted(runs)[len(runs) // 2]:.2f}"
          f" (spread {min(runs):.2f}-{max(runs):.2f}), counting "
          f"{sorted(counts)[len(counts) // 2]:.2f} (spread {min(counts):.2f}-{max(counts):.2f});"
          f" load average {os.getloadavg()[0]:.2f}")
    if len(digests) != 1:
        sys.exit(f"the stores learned different merges: {sorted(digests)}")


if __name__ == "__main__":
    main()
