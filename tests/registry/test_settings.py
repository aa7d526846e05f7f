"""The settings module, loaded in a fresh interpreter with a chosen environment."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

SHOW = """
import json
from registry import settings as s
db = s.DATABASES["default"]
print(json.dumps({"engine": db["ENGINE"], "name": str(db["NAME"]), "host": db.get("HOST"),
                  "port": db.get("PORT"), "options": db.get("OPTIONS", {}),
                  "broker": s.CELERY_BROKER_URL,
                  "transport": {k: str(v) for k, v in
                                getattr(s, "CELERY_BROKER_TRANSPORT_OPTIONS", {}).items()},
                  "media": str(s.MEDIA_ROOT), "fanout": s.FANOUT_MIN_BYTES}))
"""

NAMES = ("DATABASE_URL", "CELERY_BROKER_URL", "SQLITE_PATH", "MEDIA_ROOT", "CELERY_BROKER_DIR",
         "FANOUT_MIN_BYTES", "REGISTRY_VAR_DIR")


def load_settings(tmp_path, **env):
    clean = {k: v for k, v in os.environ.items() if k not in NAMES}
    result = subprocess.run([sys.executable, "-c", SHOW], cwd=REPO, capture_output=True,
                            text=True, env={**clean, "REGISTRY_VAR_DIR": str(tmp_path), **env})
    if result.returncode:
        return result.stderr
    return json.loads(result.stdout)


def test_without_environment_the_app_uses_sqlite_in_wal_mode_and_a_folder_broker(tmp_path):
    shown = load_settings(tmp_path)

    assert shown["engine"] == "django.db.backends.sqlite3"
    assert shown["name"] == str(tmp_path / "registry.sqlite3")
    assert shown["options"]["transaction_mode"] == "IMMEDIATE"
    assert "journal_mode=WAL" in shown["options"]["init_command"]
    assert shown["broker"].startswith("filesystem://")
    assert shown["transport"]["data_folder_in"] == str(tmp_path / "broker" / "messages")
    assert shown["media"] == str(tmp_path / "media")


def test_loading_the_settings_creates_no_folder_and_start_up_creates_what_they_need(tmp_path):
    load_settings(tmp_path)
    assert list(tmp_path.iterdir()) == []
    clean = {k: v for k, v in os.environ.items() if k not in NAMES}
    subprocess.run([sys.executable, "-c", "import django; django.setup(); "
                    "from registry.local_dirs import ensure_local_dirs; ensure_local_dirs()"],
                   cwd=REPO, check=True, env={**clean, "REGISTRY_VAR_DIR": str(tmp_path),
                                              "DJANGO_SETTINGS_MODULE": "registry.settings"})
    assert (tmp_path / "broker" / "messages").is_dir()
    assert (tmp_path / "broker" / "control").is_dir()


def test_with_debug_off_the_app_refuses_to_start_without_a_secret_key(tmp_path):
    clean = {k: v for k, v in os.environ.items() if k not in (*NAMES, "SECRET_KEY", "DEBUG")}
    result = subprocess.run([sys.executable, "manage.py", "check"], cwd=REPO, capture_output=True,
                            text=True, env={**clean, "REGISTRY_VAR_DIR": str(tmp_path),
                                            "DEBUG": "0"})
    assert result.returncode == 1
    assert result.stderr.startswith("error: SECRET_KEY is not set")
    assert "Traceback" not in result.stderr
    assert list(tmp_path.iterdir()) == []
    with_key = subprocess.run([sys.executable, "manage.py", "check"], cwd=REPO,
                              capture_output=True, text=True,
                              env={**clean, "REGISTRY_VAR_DIR": str(tmp_path), "DEBUG": "0",
                                   "SECRET_KEY": "a-key-of-this-deployment-" + "x" * 40})
    assert with_key.returncode == 0, with_key.stderr


def test_database_url_selects_postgres_and_broker_url_selects_redis(tmp_path):
    shown = load_settings(tmp_path, DATABASE_URL="postgres://u:p@db.example:5433/registry",
                          CELERY_BROKER_URL="redis://cache:6379/0", FANOUT_MIN_BYTES="1000")

    assert shown["engine"] == "django.db.backends.postgresql"
    assert (shown["name"], shown["host"], shown["port"]) == ("registry", "db.example", 5433)
    assert shown["broker"] == "redis://cache:6379/0" and shown["transport"] == {}
    assert shown["fanout"] == 1000


def test_a_number_setting_that_is_not_a_number_names_the_variable(tmp_path):
    shown = load_settings(tmp_path, FANOUT_MIN_BYTES="64MB")
    assert "FANOUT_MIN_BYTES must be an integer, got '64MB'" in shown


def run_manage(tmp_path, *args, **env):
    # as a deployment is: none of this session's settings (the browser tests' async switch)
    clean = {k: v for k, v in os.environ.items()
             if k not in (*NAMES, "SECRET_KEY", "DEBUG", "DJANGO_ALLOW_ASYNC_UNSAFE")}
    return subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, capture_output=True,
                          text=True, env={**clean, "REGISTRY_VAR_DIR": str(tmp_path), **env})


GOOD_KEY = "k3y-of-this-deployment-" + "Qx7_" * 10


def test_debug_is_off_unless_asked_for_and_manage_py_asks_on_a_bare_machine(tmp_path):
    show = ["shell", "--no-imports", "-c",
            "from django.conf import settings; print(settings.DEBUG)"]
    assert run_manage(tmp_path, *show).stdout.strip() == "True"  # no environment at all
    assert run_manage(tmp_path, *show, SECRET_KEY=GOOD_KEY).stdout.strip() == "False"
    assert run_manage(tmp_path, *show, DEBUG="0", SECRET_KEY=GOOD_KEY).stdout.strip() == "False"
    clean = {k: v for k, v in os.environ.items() if k not in (*NAMES, "SECRET_KEY", "DEBUG")}
    wsgi = subprocess.run([sys.executable, "-c", "import registry.wsgi"], cwd=REPO, text=True,
                          capture_output=True, env={**clean, "REGISTRY_VAR_DIR": str(tmp_path)})
    assert "SECRET_KEY is not set" in wsgi.stderr  # gunicorn's entry never turns DEBUG on


@pytest.mark.parametrize("key", ["change-me", "insecure-local-development-key-set-SECRET_KEY",
                                 "django-insecure-" + "abcdefgh" * 8, "short-but-random-Q7x",
                                 "a" * 80])
def test_with_debug_off_a_known_short_or_simple_key_is_refused(tmp_path, key):
    result = run_manage(tmp_path, "check", DEBUG="0", SECRET_KEY=key)
    assert result.returncode == 1
    assert result.stderr.startswith("error: SECRET_KEY is a known, short or simple key")
    assert "Traceback" not in result.stderr


def test_production_settings_pass_the_deploy_checks_at_warning_level(tmp_path):
    result = run_manage(tmp_path, "check", "--deploy", "--fail-level", "WARNING",
                        DEBUG="0", SECRET_KEY=GOOD_KEY)
    assert result.returncode == 0, result.stderr
    assert "no issues" in result.stdout


def test_the_cache_is_redis_beside_a_redis_broker_and_files_on_one_machine(tmp_path):
    show = ["shell", "--no-imports", "-c",
            "from django.conf import settings; c = settings.CACHES['default']; "
            "print(c['BACKEND'].rsplit('.', 1)[1], c['LOCATION'])"]
    redis = run_manage(tmp_path, *show, CELERY_BROKER_URL="redis://cache.example:6379/2",
                       DATABASE_URL="postgres://u:p@db.example:5433/registry")
    assert redis.stdout.split() == ["RedisCache", "redis://cache.example:6379/3"]
    files = run_manage(tmp_path, *show)
    assert files.stdout.split() == ["FileBasedCache", str(tmp_path / "cache")]


FORCE_A_500 = """
from django.test import Client, override_settings
with override_settings(ROOT_URLCONF="tests.web.failing_urls"):
    answer = Client(raise_request_exception=False).get("/fails/")
print(answer.status_code)
print(answer.content.decode())
"""


@pytest.mark.parametrize("debug", ["0", "1"])
def test_a_server_error_is_logged_to_stderr_with_its_traceback_in_every_mode(tmp_path, debug):
    result = run_manage(tmp_path, "shell", "--no-imports", "-c", FORCE_A_500, DEBUG=debug,
                        SECRET_KEY=GOOD_KEY, HTTPS="0", ALLOWED_HOSTS="testserver")
    status, _, page = result.stdout.partition("\n")
    assert status == "500", result.stderr
    assert result.stderr.count("Internal Server Error: /fails/") == 1  # once, not twice
    assert result.stderr.count("Traceback (most recent call last)") == 1
    assert "RuntimeError: a forced failure, for the test" in result.stderr
    if debug == "0":  # the user sees the plain 500 page, no traceback, no error text
        assert "<h1>Server error</h1>" in page
        assert "Traceback" not in page and "forced failure" not in page


def test_storage_url_names_a_bucket_and_its_keys_come_from_the_standard_variables(tmp_path):
    """The settings take ``STORAGE_URL`` as given; ``tokenizers_app.storage`` alone reads it,
    and a URL that names no bucket stops the process at start-up."""
    show = ("import json, django; django.setup(); from django.conf import settings as s; "
            "from tokenizers_app.storage import get_store, storage_url; store = get_store(); "
            "print(json.dumps({'url': storage_url(), 'options': s.STORAGE_OPTIONS, "
            "'default': s.STORAGES['default'], 'store': [store.bucket, store.prefix]}))")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "STORAGE_"))}
    env.update(REGISTRY_VAR_DIR=str(tmp_path), STORAGE_URL="s3://registry/prod",
               AWS_ENDPOINT_URL="http://s3.internal:8333", AWS_ACCESS_KEY_ID="id",
               AWS_SECRET_ACCESS_KEY="secret", AWS_DEFAULT_REGION="eu-west-1",
               DJANGO_SETTINGS_MODULE="registry.settings")
    shown = json.loads(subprocess.run([sys.executable, "-c", show], cwd=REPO, env=env,
                                      capture_output=True, text=True, check=True).stdout)
    assert shown["options"] == {"endpoint_url": "http://s3.internal:8333", "access_key": "id",
                                "secret_key": "secret", "region_name": "eu-west-1"}
    assert shown["url"] == ["s3://registry/prod", "registry", "prod"]
    assert shown["store"] == ["registry", "prod"]
    # no record has a FileField with a storage of its own: files go through the store
    assert shown["default"] == {"BACKEND": "django.core.files.storage.FileSystemStorage"}
    assert load_settings(tmp_path)["media"]  # without STORAGE_URL: MEDIA_ROOT, as before
    bad = subprocess.run([sys.executable, "-c", show], cwd=REPO, capture_output=True, text=True,
                         env={**env, "STORAGE_URL": "https://registry/prod"})
    assert "STORAGE_URL must look like s3://BUCKET/PREFIX" in bad.stderr
    small = subprocess.run([sys.executable, "-c", show], cwd=REPO, capture_output=True,
                           text=True, env={**env, "STORAGE_PART_BYTES": "1000"})
    assert "parts of a multipart upload of 5 MiB" in small.stderr


def test_a_sqlite_database_url_gets_the_default_sqlite_settings(tmp_path):
    """``DATABASE_URL=sqlite:///PATH`` once gave 503 "database is locked" as soon as a worker
    wrote while a page posted: it lacked the busy timeout, WAL and IMMEDIATE transactions."""
    path = tmp_path / "elsewhere.sqlite3"
    shown = load_settings(tmp_path, DATABASE_URL=f"sqlite:///{path}")

    assert shown["engine"] == "django.db.backends.sqlite3"
    assert shown["name"] == str(path)
    assert shown["options"]["transaction_mode"] == "IMMEDIATE"
    assert shown["options"]["timeout"] == 30
    assert "journal_mode=WAL" in shown["options"]["init_command"]


def test_a_sqlite_database_url_without_a_file_is_refused_in_words(tmp_path):
    shown = load_settings(tmp_path, DATABASE_URL="sqlite://:memory:")
    assert "names no database file" in shown and "SQLITE_PATH" in shown


WRITER = """
import os, sys, time
import django
os.environ["DJANGO_SETTINGS_MODULE"] = "registry.settings"
django.setup()
from django.db import connection, transaction
role, signal = sys.argv[1], sys.argv[2]
with connection.cursor() as cursor:
    cursor.execute("CREATE TABLE IF NOT EXISTS writes (x integer)")
if role == "second":
    while not os.path.exists(signal):
        time.sleep(0.02)
with transaction.atomic(), connection.cursor() as cursor:  # read, then write: a worker's way
    cursor.execute("SELECT count(*) FROM writes")
    if role == "second":
        time.sleep(0.2)  # the first commits while this one holds its read
    cursor.execute("INSERT INTO writes VALUES (1)")
    if role == "first":
        open(signal, "w").close()
        time.sleep(1.5)
print("written")
"""


def test_two_writers_on_a_sqlite_database_url_queue_up_instead_of_failing(tmp_path):
    """With ``DATABASE_URL=sqlite:///...`` a second writer (a page posting a run while a worker
    saves an evaluation) got "database is locked" at once: no WAL, no IMMEDIATE transactions."""
    clean = {k: v for k, v in os.environ.items() if k not in NAMES}
    env = {**clean, "REGISTRY_VAR_DIR": str(tmp_path),
           "DATABASE_URL": f"sqlite:///{tmp_path / 'load.sqlite3'}"}
    signal = tmp_path / "first-holds-the-lock"
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, role, str(signal)], cwd=REPO,
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True) for role in ("first", "second")]
    results = [writer.communicate(timeout=60) for writer in writers]
    assert [out.strip() for out, _ in results] == ["written", "written"], results[1][1][-800:]
