"""Throttling per client address, counted in the shared cache (Redis in production, so the
count holds across web processes and machines): ``THROTTLE_WRITES`` for writes (POST, PUT,
PATCH, DELETE), ``THROTTLE_UPLOADS`` for corpus and tokenizer uploads, ``THROTTLE_ENCODE`` for
encoding (the API's encode and the playground), ``THROTTLE_SIGNINS`` for signing in (the login
page and the admin's), counted per address and per username both, so that guessing one user's
password from many addresses is slowed down too. Over the rate a request is answered 429 with
``Retry-After`` before any view runs or any upload body is read.

Each rate is a fixed window: ``N/minute`` allows N requests in each clock minute. Every
request is counted in the shared cache, atomically, so that no client passes the rate however
many processes serve it: in Redis one ``INCR`` and ``EXPIRE`` sent together; in the file cache
one byte appended to the window's file, whose size is the count. When the cache does not
answer, requests pass (and the log says so): throttling never takes the registry down with it.
"""

import functools
import hashlib
import logging
import os
import re
import shutil
import time

from django.conf import settings
from django.core.cache import DEFAULT_CACHE_ALIAS, cache, caches
from django.core.cache.backends.filebased import FileBasedCache
from django.core.cache.backends.redis import RedisCache

from .guards import refusal

log = logging.getLogger(__name__)

PERIODS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}
UPLOADS = re.compile(r"^/(corpora/upload/|api/corpora|api/tokenizers/[^/]+/import)$")
ENCODE = re.compile(r"^/api/tokenizers/[^/]+/versions/[^/]+/encode$")
SIGN_IN = re.compile(r"^/(accounts|admin)/login/$")
# what a 429 says it counted: "{scope} from this address" unless said here
COUNTED = {"signins": "sign-ins from this address or for this username"}
SAFE = ("GET", "HEAD", "OPTIONS", "TRACE")


def parse_rate(rate: str) -> tuple[int, int]:
    """``"120/minute"`` -> ``(120, 60)``."""
    count, _, period = rate.partition("/")
    try:
        return int(count), PERIODS[period.strip().lower().rstrip("s")]
    except (KeyError, ValueError):
        raise ValueError(f"a throttle rate reads N/second, N/minute, N/hour or N/day, "
                         f"got {rate!r}") from None


def scope_of(request) -> str | None:
    """Which rate a request counts against, or None."""
    path = request.path
    if request.method == "POST" and SIGN_IN.match(path):
        return "signins"
    if request.method == "POST" and UPLOADS.match(path):
        return "uploads"
    if (request.method == "POST" and ENCODE.match(path)) or (
            path == "/playground/" and (request.method == "POST" or request.GET.get("text"))):
        return "encode"
    if request.method not in SAFE:
        return "writes"
    return None


def seconds_to_wait(scope: str, client: str) -> int:
    """0 when the request may go on; else the seconds until the window ends."""
    limit, period = parse_rate(getattr(settings, f"THROTTLE_{scope.upper()}"))
    now = time.time()
    window = int(now // period)
    try:
        count = window_count(f"throttle:{scope}:{client}:{window}", period, window)
    except Exception as error:  # noqa: BLE001 - a cache that does not answer lets requests pass
        log.warning("throttling skipped: the cache does not answer (%s)", type(error).__name__)
        return 0
    if count <= limit:
        return 0
    return max(1, int(period - now % period))


def window_count(key: str, period: int, window: int) -> int:
    """Add one to the count of ``key`` (of the ``window``-th window of ``period`` seconds) and
    give it, in one atomic step of the cache in use: Redis, the file cache, or any other
    through the cache's own ``add`` and ``incr``."""
    backend = caches[DEFAULT_CACHE_ALIAS]
    if isinstance(backend, RedisCache):
        return redis_count(backend, key, period)
    if isinstance(backend, FileBasedCache):
        return file_count(backend, key, period, window)
    return cache_count(key, period)


def redis_count(backend: RedisCache, key: str, period: int) -> int:
    """``INCR`` (atomic in Redis: each request its own count) and ``EXPIRE`` (the key outlives
    its window by a second), sent together: one round trip."""
    key = backend.make_and_validate_key(key)
    with redis_client(backend).pipeline(transaction=False) as pipe:
        count, _ = pipe.incr(key).expire(key, period + 1).execute()
    return count


@functools.lru_cache(maxsize=8)
def redis_client(backend: RedisCache):
    """The Redis client of ``backend``'s pool of write connections, made once per cache
    backend of a thread (Django's cache makes a new one for each call, at a cost as large as
    the round trip's)."""
    return backend._cache.get_client(write=True)  # noqa: SLF001 - the backend's redis client


def file_count(backend: FileBasedCache, key: str, period: int, window: int) -> int:
    """One byte appended to the key's file in the window's folder
    (``throttle/60s-29123456/<sha256 of the key>`` under the cache's folder), and the file's
    size after it, which is this request's place in the window: appending is atomic between
    the processes of one machine, so two requests never get the same count. The window's
    first request makes its folder and removes those of windows that ended before the last."""
    folder = os.path.join(backend._dir, "throttle", f"{period}s-{window}")  # noqa: SLF001
    path = os.path.join(folder, hashlib.sha256(backend.make_key(key).encode()).hexdigest())
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
    try:
        fd = os.open(path, flags, 0o600)
    except FileNotFoundError:  # the window's first request
        os.makedirs(folder, mode=0o700, exist_ok=True)
        forget_ended_windows(os.path.dirname(folder), window, period)
        fd = os.open(path, flags, 0o600)
    try:
        os.write(fd, b"1")
        return os.lseek(fd, 0, os.SEEK_CUR)
    finally:
        os.close(fd)


def forget_ended_windows(folder: str, window: int, period: int) -> None:
    """Remove the window folders of this period older than the last one:
    ``forget_ended_windows(folder, 100, 60)`` removes ``60s-98`` but keeps ``60s-99``."""
    for name in os.listdir(folder):
        length, _, number = name.partition("s-")
        if length == str(period) and number.isdigit() and int(number) < window - 1:
            shutil.rmtree(os.path.join(folder, name), ignore_errors=True)


def cache_count(key: str, period: int) -> int:
    """The count through the cache's own calls: an increment alone while the window's key
    exists, else the key added at 1; when another process added it first, the increment
    again."""
    try:
        return cache.incr(key)
    except ValueError:  # no count yet in this window
        if cache.add(key, 1, timeout=period + 1):
            return 1
    try:
        return cache.incr(key)
    except ValueError:  # the window ended between add and incr: a new one begins
        cache.add(key, 1, timeout=period + 1)
        return 1


class ThrottleMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        scope = scope_of(request)
        if scope is not None:
            wait = max([seconds_to_wait(scope, client) for client in clients_of(request, scope)])
            if wait:
                return too_many(request, scope, wait)
        return self.get_response(request)


def clients_of(request, scope: str) -> list[str]:
    """Whose count a request adds to: its address; a sign-in's username too (hashed: a key
    holds no user's text)."""
    clients = [client_address(request)]
    if scope == "signins":
        username = request.POST.get("username", "").strip().lower()
        clients.append("username:" + hashlib.sha256(username.encode()).hexdigest())
    return clients


def client_address(request) -> str:
    """The client's address: behind the deployment's front (``TRUST_X_FORWARDED_FOR=1``), the
    one the front appended last to ``X-Forwarded-For`` (a client cannot forge it), else the
    connection's."""
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if settings.TRUST_X_FORWARDED_FOR and forwarded:
        return forwarded.rsplit(",", 1)[-1].strip()
    return request.META.get("REMOTE_ADDR", "")


def too_many(request, scope: str, wait: int):
    rate = getattr(settings, f"THROTTLE_{scope.upper()}")
    message = (f"too many {COUNTED.get(scope, f'{scope} from this address')} (the limit is "
               f"{rate}, setting THROTTLE_{scope.upper()}): try again in {wait} s")
    response = refusal(request, message, 429)
    response["Retry-After"] = str(wait)
    return response
