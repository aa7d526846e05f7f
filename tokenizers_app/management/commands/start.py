"""``manage.py start [ADDRPORT]``: the whole application in one command.

Migrates the database, loads demo corpora from text already on this machine on the first start
(and queues two small demo training runs: byte-level and character-level BPE), then runs a real Celery worker process (with the
periodic reaper) next to the web server, starts it again should it exit (as the compose file's
``restart: unless-stopped`` does), and stops the worker when the server stops. The demo
corpora, tokenizers and runs are the operator's (no user), so staff-only; staff may give the
tokenizer an owner in the admin.
"""

import io
import os
import signal
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand

from tokenizers_app.errors import RegistryError
from tokenizers_app.models import Corpus
from tokenizers_app.services.corpora import import_corpus
from tokenizers_app.services.parallel import django_translations_set
from tokenizers_app.services.runs import start_training_run
from tokenizers_app.services.versions import import_trained_wordpiece

DEMO_TRAIN_BYTES = 3_000_000
DEMO_EVAL_BYTES = 1_000_000
# an exited worker is started again after this many seconds, twice as many after each exit that
# follows a short life (under WORKER_SETTLED_SECONDS), up to WORKER_RESTART_MAX_SECONDS
WORKER_RESTART_SECONDS = 1.0
WORKER_RESTART_MAX_SECONDS = 60.0
WORKER_SETTLED_SECONDS = 60.0


class Command(BaseCommand):
    help = ("Run the application: migrate, load demo corpora on the first start, then start a "
            "Celery worker and the web server together.")

    def add_arguments(self, parser):
        parser.add_argument("addrport", nargs="?", default="127.0.0.1:8000")
        parser.add_argument("--no-demo", action="store_true", help="load no demo data")
        parser.add_argument("--no-worker", action="store_true",
                            help="start no worker (run `celery -A registry worker` yourself)")
        parser.add_argument("--concurrency", type=int, default=2, help="worker processes")

    def handle(self, *args, addrport, no_demo, no_worker, concurrency, **options):
        call_command("migrate", interactive=False, verbosity=0)
        if not settings.DEBUG:  # whitenoise then serves the collected, hashed files
            call_command("collectstatic", interactive=False, verbosity=0)
        if not no_demo and not Corpus.objects.exists():
            self.load_demo()
        worker = None if no_worker else WorkerKeeper(lambda: self.start_worker(concurrency),
                                                     self.stdout.write)
        # Ctrl-C and SIGTERM stop the server and then the worker, even when this process was
        # started in the background with SIGINT ignored (a shell does that to `cmd &`)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
        try:
            self.stdout.write(f"open http://{addrport}/ (admin: /admin/, create a login with "
                              f"`manage.py createsuperuser`)")
            call_command("runserver", addrport, use_reloader=False)
        finally:
            if worker is not None:
                worker.stop()

    def load_demo(self) -> None:
        """Demo corpora from text on this machine; nothing is downloaded."""
        self.load_demo_languages()
        topics = python_help_topics()
        docs = topics + b"\n\n" + local_text(doc_files(), DEMO_TRAIN_BYTES - len(topics))
        licenses = local_text(license_files(), DEMO_EVAL_BYTES)
        if len(docs) < 10_000:
            self.stdout.write("no demo corpus: too little readable text found on this machine")
            return
        corpus = import_corpus(stream=io.BytesIO(docs), name="demo-docs",
                               original_filename="local documentation")
        self.stdout.write(f"demo corpus 'demo-docs': {corpus.size_bytes} bytes of local "
                          f"documentation")
        if len(licenses) >= 10_000:
            import_corpus(stream=io.BytesIO(licenses), name="demo-licenses",
                          original_filename="local license texts", is_evaluation=True)
            self.stdout.write("evaluation corpus 'demo-licenses': local license texts")
        run = start_training_run(corpora=[corpus], tokenizer_name="demo-docs-bpe",
                                 vocab_size=2048, special_tokens=["<|endoftext|>"])
        self.stdout.write(f"queued demo training run {run.pk} (tokenizer 'demo-docs-bpe')")
        run = start_training_run(corpora=[corpus], tokenizer_name="demo-docs-char-bpe",
                                 vocab_size=2048, algorithm="char_bpe", split="word_punct")
        self.stdout.write(f"queued demo training run {run.pk} (tokenizer 'demo-docs-char-bpe', "
                          f"character-level)")
        version = import_trained_wordpiece(lines=docs.decode().splitlines(),
                                           tokenizer_name="demo-docs-wordpiece",
                                           corpus_name=corpus.name)
        self.stdout.write(f"imported {version.label}: a BERT-style WordPiece (kind hf) trained "
                          f"on demo-docs, beside the byte-level BPE")

    def load_demo_languages(self) -> None:
        """A parallel set from Django's own translations (its ``.po`` files), so that the
        Languages page shows every version's premium per language."""
        try:
            languages = django_translations_set()
        except (RegistryError, OSError, ValueError) as exc:
            self.stdout.write(f"no demo parallel set: {exc}")
            return
        self.stdout.write(f"parallel set {languages.name!r}: Django's own messages in "
                          f"{languages.members.count()} languages, {languages.line_count} "
                          f"aligned lines (see /parallel/{languages.name}/)")

    def start_worker(self, concurrency: int) -> subprocess.Popen:
        schedule = Path(settings.VAR_DIR) / "celerybeat-schedule"
        command = [sys.executable, "-m", "celery", "-A", "registry", "worker", "--beat",
                   "--schedule", str(schedule), f"--concurrency={concurrency}",
                   "--loglevel=INFO", "--without-gossip", "--without-mingle"]
        self.stdout.write(f"starting a worker: {' '.join(command[2:])}")
        return subprocess.Popen(command, cwd=settings.BASE_DIR, env=os.environ.copy())


class WorkerKeeper(threading.Thread):
    """Keeps a worker running beside the server: a worker that exits (an unrecoverable error,
    killed by the out-of-memory killer) is started again, after a pause that grows while it
    keeps exiting young; ``stop`` stops it for good."""

    def __init__(self, start: Callable[[], subprocess.Popen], say: Callable[[str], None]):
        super().__init__(daemon=True, name="worker-keeper")
        self.start_process, self.say = start, say
        self.lock, self.stopping = threading.Lock(), threading.Event()
        self.process = start()
        self.start()

    def run(self) -> None:
        pause = WORKER_RESTART_SECONDS
        while True:
            started = time.monotonic()
            status = self.process.wait()
            if time.monotonic() - started >= WORKER_SETTLED_SECONDS:
                pause = WORKER_RESTART_SECONDS
            if self.stopping.is_set():
                return
            self.say(f"the worker exited (status {status}): starting it again in {pause:g} s")
            if self.stopping.wait(pause):
                return
            with self.lock:
                if self.stopping.is_set():
                    return
                self.process = self.start_process()
            pause = min(pause * 2, WORKER_RESTART_MAX_SECONDS)

    def stop(self) -> None:
        with self.lock:
            self.stopping.set()
            process = self.process
        stop_worker(process)


def stop_worker(worker: subprocess.Popen) -> None:
    """Ask the worker to finish its current tasks; kill it if it takes longer than 20 s."""
    if worker.poll() is None:
        worker.terminate()
        try:
            worker.wait(timeout=20)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait()


def python_help_topics() -> bytes:
    """The text of Python's own ``help()`` topics (part of the standard library)."""
    try:
        from pydoc_data.topics import topics
    except ImportError:
        return b""
    return "\n\n".join(topics[key].strip() for key in sorted(topics)).encode()


def doc_files() -> list[Path]:
    """The copyright files of the installed packages (Debian-style systems)."""
    return sorted(Path("/usr/share/doc").glob("*/copyright"))


def license_files() -> list[Path]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    return [stdlib / "LICENSE.txt"] + sorted(Path("/usr/share/common-licenses").glob("*"))


def local_text(paths: list[Path], limit: int) -> bytes:
    """The UTF-8 files among ``paths`` joined by blank lines, up to ``limit`` bytes; unreadable
    or non-UTF-8 files are skipped."""
    parts, size = [], 0
    for path in paths:
        try:
            data = path.read_bytes()
            data.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if size + len(data) > limit:
            continue
        parts.append(data.strip())
        size += len(data) + 2
    return b"\n\n".join(parts) + b"\n" if parts else b""
