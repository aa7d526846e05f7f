"""Throttling per client address in the shared cache: writes, uploads and encoding over their
rate get 429 with Retry-After before any view runs or any upload body is read."""

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tokenizers_app.throttle import parse_rate, scope_of

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def address():
    """An address of this test's own, so no other test's count is in its window."""
    return f"10.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}"


@pytest.fixture
def one_window(monkeypatch):
    """The throttle's clock stopped in the middle of a minute, so that a test's requests all
    fall in one window however long they take (password hashing is slow on purpose)."""
    from types import SimpleNamespace

    from tokenizers_app import throttle

    middle = time.time() // 60 * 60 + 30
    monkeypatch.setattr(throttle, "time", SimpleNamespace(time=lambda: middle))


@pytest.mark.parametrize(("rate", "parsed"), [("120/minute", (120, 60)), ("5/second", (5, 1)),
                                              ("30/hour", (30, 3600)), ("2/days", (2, 86400))])
def test_a_rate_reads_count_and_period(rate, parsed):
    assert parse_rate(rate) == parsed


@pytest.mark.parametrize("rate", ["120", "x/minute", "5/fortnight"])
def test_a_rate_that_does_not_read_names_the_form(rate):
    with pytest.raises(ValueError, match="N/second, N/minute, N/hour or N/day"):
        parse_rate(rate)


@pytest.mark.parametrize(("method", "path", "query", "scope"), [
    ("POST", "/corpora/upload/", "", "uploads"),
    ("POST", "/api/corpora", "", "uploads"),
    ("POST", "/api/tokenizers/gpt2/import", "", "uploads"),
    ("POST", "/api/tokenizers/gpt2/versions/3/encode", "", "encode"),
    ("GET", "/playground/", "text=hello", "encode"),
    ("GET", "/playground/", "", None),
    ("POST", "/playground/", "", "encode"),
    ("POST", "/runs/new/", "", "writes"),
    ("PUT", "/api/tokenizers/gpt2/aliases/production", "", "writes"),
    ("POST", "/accounts/login/", "", "signins"),
    ("POST", "/admin/login/", "", "signins"),
    ("GET", "/accounts/login/", "", None),
    ("GET", "/api/tokenizers", "", None),
])
def test_each_request_counts_against_the_rate_of_what_it_does(rf, method, path, query, scope):
    request = rf.generic(method, f"{path}?{query}" if query else path)
    assert scope_of(request) == scope


def test_writes_over_the_rate_get_429_with_retry_after(client, settings, address):
    settings.THROTTLE_WRITES = "2/minute"
    answers = [client.post("/api/runs", "{}", content_type="application/json",
                           REMOTE_ADDR=address) for _ in range(3)]
    assert [a.status_code for a in answers[:2]] == [401, 401]
    assert answers[2].status_code == 429
    assert 1 <= int(answers[2]["Retry-After"]) <= 60
    assert "the limit is 2/minute, setting THROTTLE_WRITES" in answers[2].json()["detail"]
    other = client.post("/api/runs", "{}", content_type="application/json",
                        REMOTE_ADDR=address + "1")
    assert other.status_code == 401  # another address has its own count


def test_an_upload_over_the_rate_is_refused_before_its_body_is_read(client, settings, address):
    settings.THROTTLE_UPLOADS = "1/hour"
    client.post("/corpora/upload/", {}, REMOTE_ADDR=address)
    huge = client.post("/corpora/upload/", b"", content_type="multipart/form-data; boundary=x",
                       CONTENT_LENGTH=str(10 * settings.CORPUS_MAX_BYTES), REMOTE_ADDR=address)
    assert huge.status_code == 429  # not 413: the size was never looked at
    assert huge["Content-Type"].startswith("text/plain")
    assert "too many uploads from this address" in huge.content.decode()


@pytest.mark.django_db
def test_encoding_over_the_rate_gets_429_on_the_playground(client, settings, address):
    settings.THROTTLE_ENCODE = "1/minute"
    assert client.get("/playground/", {"text": "hi"}, REMOTE_ADDR=address).status_code == 200
    assert client.get("/playground/", {"text": "hi"}, REMOTE_ADDR=address).status_code == 429
    assert client.get("/playground/", REMOTE_ADDR=address).status_code == 200
    assert client.post("/playground/", {"text": "hi"}, REMOTE_ADDR=address).status_code == 429


@pytest.mark.django_db
@pytest.mark.parametrize("login", ["/accounts/login/", "/admin/login/"])
def test_wrong_passwords_in_a_row_from_one_address_are_slowed_down(client, settings, address,
                                                                   django_user_model, login,
                                                                   one_window):
    settings.THROTTLE_SIGNINS = "10/minute"
    name = f"user-{uuid.uuid4().hex[:8]}"
    django_user_model.objects.create_user(name, password="right-password-1", is_staff=True)
    answers = [client.post(login, {"username": name, "password": f"wrong-{n}"},
                           REMOTE_ADDR=address).status_code for n in range(30)]
    assert answers == [200] * 10 + [429] * 20  # the form again (wrong password), then 429
    refused = client.post(login, {"username": name, "password": "right-password-1"},
                          REMOTE_ADDR=address)
    assert refused.status_code == 429 and refused["Retry-After"] == "30"
    assert "too many sign-ins from this address or for this username (the limit is " \
           "10/minute, setting THROTTLE_SIGNINS)" in refused.content.decode()


@pytest.mark.django_db
def test_guessing_one_users_password_from_many_addresses_is_slowed_down(client, settings,
                                                                        address, one_window):
    settings.THROTTLE_SIGNINS = "5/minute"
    name = f"user-{uuid.uuid4().hex[:8]}"
    answers = [client.post("/accounts/login/", {"username": name, "password": "guess"},
                           REMOTE_ADDR=f"{address}{n}").status_code for n in range(8)]
    assert answers == [200] * 5 + [429] * 3
    assert client.post("/accounts/login/", {"username": name.upper(), "password": "guess"},
                       REMOTE_ADDR=address + "9").status_code == 429  # the same username
    other = client.post("/accounts/login/", {"username": name + "x", "password": "guess"},
                        REMOTE_ADDR=address + "9")
    assert other.status_code == 200  # another user, from an address with no count yet


@pytest.mark.django_db
def test_the_count_is_shared_by_every_process_through_the_cache(settings, address):
    """A second Python process (as a second gunicorn worker is) sees this process's count."""
    from tokenizers_app.throttle import seconds_to_wait

    settings.THROTTLE_WRITES = "2/hour"
    assert seconds_to_wait("writes", address) == 0
    assert seconds_to_wait("writes", address) == 0
    other = subprocess.run(
        [sys.executable, "-c", "import django; django.setup(); "
         "from tokenizers_app.throttle import seconds_to_wait; "
         f"print(seconds_to_wait('writes', {address!r}))"],
        cwd=REPO, capture_output=True, text=True, timeout=60,
        env={**os.environ, "THROTTLE_WRITES": "2/hour"})
    assert other.returncode == 0, other.stderr
    assert int(other.stdout) > 0


def test_a_cache_that_does_not_answer_lets_requests_pass(client, settings, address, caplog):
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                                   "LOCATION": "redis://127.0.0.1:1/0"}}
    settings.THROTTLE_WRITES = "1/minute"
    for _ in range(3):
        assert client.post("/api/runs", "{}", content_type="application/json",
                           REMOTE_ADDR=address).status_code == 401
    assert "throttling skipped: the cache does not answer" in caplog.text


def counts_from_threads(threads: int, each: int, key: str) -> list[int]:
    """The counts ``window_count`` gave ``threads`` threads counting ``each`` requests of one
    key at once."""
    from concurrent.futures import ThreadPoolExecutor

    from tokenizers_app.throttle import window_count

    window = int(time.time() // 3600)
    with ThreadPoolExecutor(threads) as pool:
        runs = [pool.submit(lambda: [window_count(key, 3600, window) for _ in range(each)])
                for _ in range(threads)]
        return sorted(count for run in runs for count in run.result())


def test_the_file_cache_gives_every_request_of_a_window_its_own_count(settings, tmp_path):
    """Requests counted at once get 1, 2, ..., N: none lost, none shared (a client cannot
    pass the rate by sending requests together)."""
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.filebased."
                                              "FileBasedCache", "LOCATION": str(tmp_path)}}
    assert counts_from_threads(4, 50, f"throttle:encode:{uuid.uuid4()}") == list(range(1, 201))
    [window] = os.listdir(tmp_path / "throttle")
    assert window == f"3600s-{int(time.time() // 3600)}"


def test_the_file_cache_forgets_the_windows_that_ended(settings, tmp_path):
    from tokenizers_app.throttle import window_count

    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.filebased."
                                              "FileBasedCache", "LOCATION": str(tmp_path)}}
    for window in (97, 98, 99, 100):
        assert window_count("throttle:writes:10.0.0.1", 60, window) == 1
    assert window_count("throttle:writes:10.0.0.1", 60, 100) == 2
    assert window_count("throttle:writes:10.0.0.1", 3600, 5) == 1  # another period's own
    assert sorted(os.listdir(tmp_path / "throttle")) == ["3600s-5", "60s-100", "60s-99"]


@pytest.fixture
def redis_cache(settings):
    """The default cache in the Redis running here, under a key prefix of this test's own."""
    redis = pytest.importorskip("redis")
    try:
        redis.Redis.from_url("redis://127.0.0.1:6379/15", socket_timeout=2).ping()
    except redis.exceptions.ConnectionError:
        pytest.skip("no Redis at 127.0.0.1:6379")
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                                   "LOCATION": "redis://127.0.0.1:6379/15",
                                   "KEY_PREFIX": f"test-{uuid.uuid4().hex}"}}
    return redis.Redis.from_url("redis://127.0.0.1:6379/15")


def test_redis_gives_every_request_of_a_window_its_own_count_and_forgets_it(redis_cache):
    from django.core.cache import cache

    key = f"throttle:encode:{uuid.uuid4()}"
    assert counts_from_threads(4, 50, key) == list(range(1, 201))
    assert cache.get(key) == 200  # the count is the cache's own integer
    assert 0 < redis_cache.ttl(cache.make_and_validate_key(key)) <= 3601


def test_encoding_over_the_rate_gets_429_with_the_count_in_redis(client, settings, address,
                                                                 redis_cache, one_window):
    settings.THROTTLE_ENCODE = "2/minute"
    answers = [client.post("/api/tokenizers/x/versions/1/encode", "{}",
                           content_type="application/json", REMOTE_ADDR=address)
               for _ in range(3)]
    assert [a.status_code == 429 for a in answers] == [False, False, True]
    assert answers[2]["Retry-After"] == "30"
