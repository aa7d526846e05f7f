"""The process's bounded caches (``tokenizers_app.caches``): least recently used forgotten first,
the bound read on each use, safe between threads."""

import threading

from tokenizers_app.caches import BoundedCache


def test_the_least_recently_used_entry_is_forgotten_first():
    cache = BoundedCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "a" is now the most recently used
    cache.put("c", 3)
    assert (cache.get("a"), cache.get("b"), cache.get("c")) == (1, None, 3)
    assert len(cache) == 2 and "b" not in cache


def test_putting_a_kept_key_again_replaces_it_and_makes_it_recent():
    cache = BoundedCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.put("a", 10) == 10
    cache.put("c", 3)
    assert (cache.get("a"), cache.get("b")) == (10, None)


def test_a_bound_given_as_a_function_is_read_on_each_put():
    bound = [3]
    cache = BoundedCache(lambda: bound[0])
    for key in "abc":
        cache.put(key, key)
    assert len(cache) == 3
    bound[0] = 1
    cache.put("d", "d")
    assert len(cache) == 1 and cache.get("d") == "d"


def test_clear_forgets_everything():
    cache = BoundedCache(4)
    cache.put("a", 1)
    cache.clear()
    assert len(cache) == 0 and cache.get("a") is None


def test_threads_sharing_a_cache_never_push_it_past_its_bound():
    cache, errors = BoundedCache(16), []
    start = threading.Barrier(8)

    def hammer(offset: int) -> None:
        try:
            start.wait()
            for i in range(5_000):
                cache.put((offset, i % 40), i)
                cache.get((offset, (i * 7) % 40))
                assert len(cache) <= 16
        except Exception as exc:  # noqa: BLE001 - reported below, on the main thread
            errors.append(exc)

    threads = [threading.Thread(target=hammer, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and len(cache) == 16


def test_a_cache_bounded_in_bytes_forgets_the_oldest_until_the_measured_total_fits():
    budget = [3000]
    cache = BoundedCache(100, max_bytes=lambda: budget[0], weigh=lambda value: len(value))
    cache.put("a", b"x" * 1000)
    cache.put("b", b"x" * 1000)
    cache.put("c", b"x" * 1000)
    assert len(cache) == 3 and cache.bytes == 3000
    cache.get("a")  # now the most recent
    cache.put("d", b"x" * 1500)
    assert "b" not in cache and "c" not in cache and "a" in cache and "d" in cache
    assert cache.bytes == 2500


def test_an_entry_larger_than_the_whole_budget_is_returned_and_not_kept():
    cache = BoundedCache(100, max_bytes=lambda: 100, weigh=len)
    cache.put("small", b"x" * 10)
    big = b"x" * 1000
    assert cache.put("big", big) is big
    assert "big" not in cache and cache.get("small") == b"x" * 10


def test_deep_size_measures_what_an_object_reaches_once():
    from tokenizers_app.caches import deep_size

    table = {i: bytes([i % 256]) * 100 for i in range(1000)}
    assert deep_size(table) > 1000 * 100
    assert deep_size([table, table]) < deep_size(table) + 200  # reached twice, counted once

    class Shared:
        pass

    held = {"shared": Shared(), "own": b"y" * 5000}
    assert deep_size(held, skip=(Shared,)) < deep_size(held)
