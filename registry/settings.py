"""Settings for the Tokenizer Registry, driven by environment variables.

With no environment at all the app runs from a fresh checkout: SQLite in WAL mode under ``var/``,
a Celery broker kept in files under ``var/broker/`` (no server needed), media under
``var/media/``. Production sets ``DATABASE_URL`` (Postgres) and ``CELERY_BROKER_URL`` (Redis).
Importing this module creates no folder (``registry.local_dirs`` does, at start-up), and with
``DEBUG`` off it refuses to load without a ``SECRET_KEY``.
"""

import os
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from registry.local_dirs import var_dir

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = var_dir()


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in ("1", "true", "yes", "on")


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"environment variable {name} must be an integer, got {value!r}") from None


# DEBUG is off unless asked for (DEBUG=1). manage.py asks for it on a machine with no
# environment (the README's two commands); gunicorn and Celery started on their own never do.
DEBUG = env_bool("DEBUG", False)
DEVELOPMENT_KEY = "insecure-local-development-key-set-SECRET_KEY"
# Keys anyone can read (in this repository, in Django's template, in examples): never in production.
KNOWN_KEYS = {DEVELOPMENT_KEY, "change-me", "changeme", "secret", "collectstatic-only"}
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not DEBUG:
    if not SECRET_KEY:
        raise ImproperlyConfigured(
            "SECRET_KEY is not set: with DEBUG off the registry needs a secret key of its own; "
            "set SECRET_KEY to a long random string, e.g. the output of python3 -c 'import "
            "secrets; print(secrets.token_urlsafe(50))'")
    if (SECRET_KEY in KNOWN_KEYS or SECRET_KEY.startswith("django-insecure-")
            or len(SECRET_KEY) < 50 or len(set(SECRET_KEY)) < 5):
        raise ImproperlyConfigured(
            "SECRET_KEY is a known, short or simple key: with DEBUG off set it to a long random "
            "string of this deployment's own (50 characters or more), e.g. the output of "
            "python3 -c 'import secrets; print(secrets.token_urlsafe(50))'")
elif not SECRET_KEY:
    SECRET_KEY = DEVELOPMENT_KEY  # DEBUG only
ALLOWED_HOSTS = os.environ.get("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]").split(",")
CSRF_TRUSTED_ORIGINS = [o for o in os.environ.get("CSRF_TRUSTED_ORIGINS", "").split(",") if o]

# HTTPS only, unless DEBUG or HTTPS=0 (a stack served on plain http://localhost, like the compose
# file's): then cookies travel only over TLS and browsers are told to use nothing else (HSTS).
# Behind the deployment's front (deploy/front.conf), TRUST_X_FORWARDED_FOR=1 counts each client by
# the address the front appends to X-Forwarded-For (the throttle), not the front's own.
TRUST_X_FORWARDED_FOR = env_bool("TRUST_X_FORWARDED_FOR", False)
# Behind a proxy that ends TLS, TRUST_X_FORWARDED_PROTO=1 takes its X-Forwarded-Proto header.
HTTPS = env_bool("HTTPS", not DEBUG)
SECURE_SSL_REDIRECT = HTTPS
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = HTTPS
SECURE_HSTS_SECONDS = env_int("HSTS_SECONDS", 365 * 24 * 3600) if HTTPS else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = SECURE_HSTS_PRELOAD = HTTPS
if env_bool("TRUST_X_FORWARDED_PROTO", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "ninja",  # its Swagger UI files, served from here (no CDN)
    "tokenizers_app",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "tokenizers_app.guards.RequestGuardsMiddleware",
    "tokenizers_app.pattern_budget.PatternBudgetMiddleware",
    "tokenizers_app.body_gate.BodyGateMiddleware",  # before anything reads a body
    "tokenizers_app.throttle.ThrottleMiddleware",  # before an upload's body is read
    "tokenizers_app.uploads.CorpusUploadMiddleware",  # its gate, before CSRF reads the body
    "tokenizers_app.guards.FormLimitsMiddleware",  # a form over Django's counts: 413, not CSRF
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "registry.urls"
WSGI_APPLICATION = "registry.wsgi.application"
ASGI_APPLICATION = "registry.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]


# -- database -------------------------------------------------------------------------------------
# DATABASE_URL (postgres://user:password@host:5432/name) selects Postgres via psycopg 3. Without it:
# SQLite in WAL mode (readers never wait for the writer) with IMMEDIATE transactions (a writer takes
# the lock when its transaction begins, so two writers queue up instead of failing mid-way).

def sqlite_database(path: Path) -> dict:
    """SQLite's settings; ``SQLITE_CONN_MAX_AGE`` (seconds, 0 by default: a connection per
    request, as Django's development server needs) keeps a process's connection open between
    requests, as a Postgres ``DATABASE_URL`` always does (60 s): a single-machine deployment on
    SQLite served by gunicorn then skips the connect and its pragmas on every request."""
    return {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": path,
        "CONN_MAX_AGE": env_int("SQLITE_CONN_MAX_AGE", 0),
        "OPTIONS": {
            "transaction_mode": "IMMEDIATE",
            "timeout": 30,
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        },
        "TEST": {"NAME": VAR_DIR / "test-registry.sqlite3"},
    }


def sqlite_url_path(url: str) -> Path | None:
    """The file of a ``sqlite:///PATH`` database URL (``sqlite:////abs/path`` is absolute,
    ``sqlite:///rel/path`` relative to the working folder), or None for any other URL: such a
    database gets the settings of the default SQLite (WAL, IMMEDIATE, busy timeout), as
    ``SQLITE_PATH`` does, so a worker writing while a page posts waits instead of failing."""
    if not url.startswith("sqlite:"):
        return None
    parsed = dj_database_url.parse(url)
    if str(parsed["NAME"]) in ("", ":memory:"):
        raise ImproperlyConfigured(f"DATABASE_URL={url} names no database file: write "
                                   f"sqlite:////absolute/path.sqlite3, or set SQLITE_PATH")
    return Path(parsed["NAME"])


if os.environ.get("DATABASE_URL") and sqlite_url_path(os.environ["DATABASE_URL"]) is not None:
    DATABASES = {"default": sqlite_database(sqlite_url_path(os.environ["DATABASE_URL"]))}
elif os.environ.get("DATABASE_URL"):
    DATABASES = {"default": dj_database_url.parse(os.environ["DATABASE_URL"], conn_max_age=60,
                                                  conn_health_checks=True)}
else:
    DATABASES = {"default": sqlite_database(
        Path(os.environ.get("SQLITE_PATH", VAR_DIR / "registry.sqlite3")))}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", VAR_DIR / "static"))
# whitenoise serves /static/: from the apps' folders while DEBUG is on (no collectstatic needed),
# from STATIC_ROOT with hashed, compressed, long-cached names otherwise.
WHITENOISE_USE_FINDERS = DEBUG
WHITENOISE_AUTOREFRESH = DEBUG
STORAGES = {
    # no record holds a FileField: files go through tokenizers_app.storage, whichever store
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage" if DEBUG
                    else "registry.static_files.StaticFilesStorage"},
}

# Corpus files, cached downloads and partial counts live here, unless STORAGE_URL names a bucket
# (then each process keeps only its cache here, and workers need not share the folder).
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT", VAR_DIR / "media"))
MEDIA_URL = "media/"


# -- storage: MEDIA_ROOT, or an S3-compatible bucket (tokenizers_app.storage) -------------------
# STORAGE_URL=s3://BUCKET/PREFIX puts corpora, count parts and rendered downloads in the bucket
# (boto3); endpoint and keys from the standard AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID,
# AWS_SECRET_ACCESS_KEY and AWS_DEFAULT_REGION. The URL is taken as given here and read in one
# place, tokenizers_app.storage, which refuses (at start-up) one that names no bucket.
STORAGE_URL = os.environ.get("STORAGE_URL", "").strip()
STORAGE_OPTIONS = {key: value for key, value in {
    "endpoint_url": os.environ.get("AWS_ENDPOINT_URL"),
    "region_name": os.environ.get("AWS_DEFAULT_REGION"),
    "access_key": os.environ.get("AWS_ACCESS_KEY_ID"),
    "secret_key": os.environ.get("AWS_SECRET_ACCESS_KEY"),
}.items() if value}
# Uploads to the bucket go in parts of this size (one part in memory at a time, none on disk).
STORAGE_PART_BYTES = env_int("STORAGE_PART_BYTES", 8 * 1024**2)
if STORAGE_PART_BYTES < 5 * 1024**2:
    raise ImproperlyConfigured(f"STORAGE_PART_BYTES is {STORAGE_PART_BYTES}: S3 takes parts of a "
                               f"multipart upload of 5 MiB (5242880 bytes) or more")
# Seconds to wait for the store to connect or answer, per try (two tries), before a 503.
STORAGE_TIMEOUT_SECONDS = env_int("STORAGE_TIMEOUT_SECONDS", 10)
# A worker keeps local copies of the corpora it trained on (by sha256) up to this many bytes;
# 0: none kept (each copy is removed after use). STORAGE_CACHE_DIR: where (MEDIA_ROOT/cache).
STORAGE_CACHE_BYTES = env_int("STORAGE_CACHE_BYTES", 4 * 1024**3)
STORAGE_CACHE_DIR = os.environ.get("STORAGE_CACHE_DIR", "")


# -- cache: throttling counts here, so it is shared by every web process -------------------------
# Redis when CACHE_URL names one, or the next database of a Redis CELERY_BROKER_URL (db 0 -> 1);
# otherwise files under var/cache/ (shared by the processes of one machine).

def cache_url_beside(broker_url: str) -> str:
    if not broker_url.startswith(("redis://", "rediss://")):
        return ""
    parts = urlsplit(broker_url)
    db = int(parts.path.strip("/") or 0)
    return urlunsplit(parts._replace(path=f"/{(db + 1) % 16}"))


CACHE_URL = os.environ.get("CACHE_URL") or cache_url_beside(
    os.environ.get("CELERY_BROKER_URL", ""))
CACHES = {"default": {
    "BACKEND": "django.core.cache.backends.redis.RedisCache" if CACHE_URL
    else "django.core.cache.backends.filebased.FileBasedCache",
    "LOCATION": CACHE_URL or str(VAR_DIR / "cache"),
    "KEY_PREFIX": os.environ.get("CACHE_KEY_PREFIX", "registry"),
}}
# Requests per client address and period (N/second, N/minute, N/hour): writes (POST, PUT, ...),
# uploads (corpora, tokenizer files), encoding (API and playground), and sign-ins (per address
# and per username). Over it: 429.
THROTTLE_WRITES = os.environ.get("THROTTLE_WRITES", "120/minute")
THROTTLE_UPLOADS = os.environ.get("THROTTLE_UPLOADS", "30/hour")
THROTTLE_ENCODE = os.environ.get("THROTTLE_ENCODE", "600/minute")
THROTTLE_SIGNINS = os.environ.get("THROTTLE_SIGNINS", "10/minute")

# -- the registry's own limits ---------------------------------------------------------------------

CORPUS_MAX_BYTES = env_int("CORPUS_MAX_BYTES", 2 * 1024**3)
# A parallel set's file (TSV, JSON Lines, zip of .po files) is read in memory: at most this.
PARALLEL_MAX_BYTES = env_int("PARALLEL_MAX_BYTES", 64 * 1024**2)
MAX_VOCAB_SIZE = env_int("MAX_VOCAB_SIZE", 1_000_000)
# The most vocab sizes a run's sweep may list (each is a version with its rows, and evaluations).
MAX_SWEEP_SIZES = env_int("MAX_SWEEP_SIZES", 32)
# The longest pre-token a run merges (pattern none on a huge line is refused, in words): merging
# holds about 45 bytes per byte of a pre-token.
MAX_PRETOKEN_BYTES = env_int("MAX_PRETOKEN_BYTES", 8 * 1024**2)
# Corpora above this many bytes are counted by several count tasks (one per byte range).
FANOUT_MIN_BYTES = env_int("FANOUT_MIN_BYTES", 64 * 1024**2)
FANOUT_PART_BYTES = env_int("FANOUT_PART_BYTES", 16 * 1024**2)
# Keep each part's pre-token counts under MEDIA_ROOT/runs/ after the run (for inspection).
FANOUT_KEEP_COUNTS = env_bool("FANOUT_KEEP_COUNTS", False)
# A running run whose heartbeat is older than this is re-queued by the reaper ...
RUN_STALE_SECONDS = env_int("RUN_STALE_SECONDS", 120)
# A running attempt (or evaluation) writes its heartbeat this often from a thread of its own.
RUN_HEARTBEAT_SECONDS = env_int("RUN_HEARTBEAT_SECONDS", 10)
# ... at most this many times in all; then it fails.
RUN_MAX_ATTEMPTS = env_int("RUN_MAX_ATTEMPTS", 3)
# Evaluations read the whole corpus; set this (bytes) to read at most this many of it (an opt-in
# cap: the scores are then labelled "first N MB").
EVALUATION_MAX_BYTES = env_int("EVALUATION_MAX_BYTES", 0)
# Anonymous visitors may browse the dashboard (read-only); starting runs and uploading need a
# signed-in user either way.
DASHBOARD_ANONYMOUS_READS = env_bool("DASHBOARD_ANONYMOUS_READS", True)
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "index"
LOGOUT_REDIRECT_URL = "index"
# The HTTP API: anonymous callers may read (encode included) unless this is off; texts to encode
# and tokenizer files to import are capped.
API_ANONYMOUS_READS = env_bool("API_ANONYMOUS_READS", True)
API_ENCODE_MAX_CHARS = env_int("API_ENCODE_MAX_CHARS", 200_000)
TOKENIZER_IMPORT_MAX_BYTES = env_int("TOKENIZER_IMPORT_MAX_BYTES", 100 * 1024**2)
# Processor seconds (of the thread serving it) a web request may spend splitting text with custom
# patterns, in all (the encode API, the playground): past them, 422 in words. Workers keep bpe's
# MATCH_SECONDS per text. At most WEB_MATCH_SLOTS requests per web process split text with custom
# patterns at once, WEB_MATCH_QUEUE more wait for a slot; any other: 429 in words.
WEB_MATCH_SECONDS = float(os.environ.get("WEB_MATCH_SECONDS") or 2)
WEB_MATCH_SLOTS = env_int("WEB_MATCH_SLOTS", 1)
WEB_MATCH_QUEUE = env_int("WEB_MATCH_QUEUE", 1)
# Tokenizers kept loaded per web process (keyed by digest) for encoding on request.
LOADED_TOKENIZERS = env_int("LOADED_TOKENIZERS", 8)
# ... and at most this many bytes of them, measured as each is loaded (a bigger one is loaded for
# its request and let go).
LOADED_TOKENIZERS_BYTES = env_int("LOADED_TOKENIZERS_BYTES", 256 * 1024**2)
# Another library's tokenizer files (hf, sentencepiece) are untrusted programs: they run only in
# child processes, each under a memory limit (address space) and a processor-time limit, killed
# past a wall-clock limit (engines/sandbox.py). An import is checked in a disposable child first:
IMPORT_CHECK_MEMORY_BYTES = env_int("IMPORT_CHECK_MEMORY_BYTES", 2 * 1024**3)
IMPORT_CHECK_SECONDS = env_int("IMPORT_CHECK_SECONDS", 60)
IMPORT_MAX_JSON_DEPTH = env_int("IMPORT_MAX_JSON_DEPTH", 64)  # refused before any parser runs
IMPORT_MAX_GROWTH = float(os.environ.get("IMPORT_MAX_GROWTH") or 8)  # a normalizer's growth
IMPORT_INPUT_SECONDS = float(os.environ.get("IMPORT_INPUT_SECONDS") or 1)  # per adversarial text
# ... then each web process encodes with a pool of this many children, each with this memory,
# answering within ENGINE_WEB_SECONDS (a cold load within ENGINE_LOAD_SECONDS more):
ENGINE_POOL_SIZE = env_int("ENGINE_POOL_SIZE", 2)
ENGINE_MEMORY_BYTES = env_int("ENGINE_MEMORY_BYTES", 1024**3)
ENGINE_WEB_SECONDS = float(os.environ.get("ENGINE_WEB_SECONDS") or 5)
ENGINE_LOAD_SECONDS = env_int("ENGINE_LOAD_SECONDS", 60)
ENGINE_CPU_SECONDS = env_int("ENGINE_CPU_SECONDS", 600)  # a child's life; then a fresh one
# ... and a worker evaluates with one child of this memory, answering within this long:
ENGINE_WORKER_MEMORY_BYTES = env_int("ENGINE_WORKER_MEMORY_BYTES", 2 * 1024**3)
ENGINE_WORKER_SECONDS = env_int("ENGINE_WORKER_SECONDS", 30 * 60)
# A running evaluation whose heartbeat (written every RUN_HEARTBEAT_SECONDS while its worker
# lives) is older than this lost its worker: the reaper queues it again.
EVALUATION_STALE_SECONDS = env_int("EVALUATION_STALE_SECONDS", 120)
# ... at most this many starts in all; then it fails in words (a file that kills its worker).
EVALUATION_MAX_ATTEMPTS = env_int("EVALUATION_MAX_ATTEMPTS", 3)
# An evaluation queued this long ago may have lost its task (broker down): the reaper resends it.
EVALUATION_RESEND_SECONDS = env_int("EVALUATION_RESEND_SECONDS", 10 * 60)


# -- Celery ---------------------------------------------------------------------------------------
# Without CELERY_BROKER_URL the broker is a folder of message files (kombu's filesystem transport):
# it works across processes, so a real worker runs with no server. There is no result backend:
# job state lives in the database.

CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "filesystem://localhost//")
if CELERY_BROKER_URL.startswith("filesystem:"):
    BROKER_DIR = Path(os.environ.get("CELERY_BROKER_DIR", VAR_DIR / "broker"))
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(BROKER_DIR / "messages"),
        "data_folder_out": str(BROKER_DIR / "messages"),
        "control_folder": str(BROKER_DIR / "control"),
        "processed_folder": str(BROKER_DIR / "processed"),
        "store_processed": False,
        "polling_interval": 0.2,  # seconds between looks at the folder
    }  # the folders are created by registry.local_dirs, not here
    CELERY_BROKER_TRANSPORT = "registry.broker:Transport"  # messages published whole
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("CELERY_TASK_DEFAULT_QUEUE", "celery")
CELERY_TASK_IGNORE_RESULT = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# The backstop for any task that runs away: after TASK_TIME_LIMIT_SECONDS (12 h) it is told to
# stop (a run then fails saying so); a minute later its worker process is killed.
TASK_TIME_LIMIT_SECONDS = env_int("TASK_TIME_LIMIT_SECONDS", 12 * 3600)
CELERY_TASK_SOFT_TIME_LIMIT = TASK_TIME_LIMIT_SECONDS
CELERY_TASK_TIME_LIMIT = TASK_TIME_LIMIT_SECONDS + 60
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# What dead work left in MEDIA_ROOT (count files of dead attempts, .part files of killed
# uploads and writes) is removed every SWEEP_EVERY_SECONDS, once SWEEP_MIN_AGE_SECONDS old.
SWEEP_EVERY_SECONDS = env_int("SWEEP_EVERY_SECONDS", 15 * 60)
SWEEP_MIN_AGE_SECONDS = env_int("SWEEP_MIN_AGE_SECONDS", 60 * 60)
CELERY_BEAT_SCHEDULE = {
    "reap-stale-runs": {"task": "tokenizers_app.tasks.reap_runs", "schedule": 60.0},
    "sweep-leftovers": {"task": "tokenizers_app.tasks.sweep_leftovers",
                        "schedule": float(SWEEP_EVERY_SECONDS)},
}

# The app's own lines go to stderr. So does every error a request met (a 500, with its
# traceback) in every mode: with DEBUG on, Django's own console handler prints them; with DEBUG
# off, "requests" does (Django alone would only mail them to ADMINS, and there are none).
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"debug_off": {"()": "django.utils.log.RequireDebugFalse"}},
    "handlers": {
        "console": {"class": "logging.StreamHandler"},
        "requests": {"class": "logging.StreamHandler", "level": "ERROR",
                     "filters": ["debug_off"]},
    },
    "loggers": {
        "tokenizers_app": {"handlers": ["console"], "level": "INFO"},
        "django.request": {"handlers": ["requests"]},
    },
}
