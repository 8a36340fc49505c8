"""The one bounded cache: single-flight under threads, LRU eviction, peek and put."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from dibench._cache import LruCache


def test_lru_cache_computes_once_under_concurrency_and_evicts() -> None:
    cache: LruCache[int, int] = LruCache(2)
    calls: list[int] = []
    gate = threading.Event()

    def slow(v: int) -> int:
        gate.wait(5)
        calls.append(v)
        return v * 10

    with ThreadPoolExecutor(4) as pool:
        futs = [pool.submit(cache.get, 1, lambda: slow(1)) for _ in range(4)]
        gate.set()
        assert [f.result() for f in futs] == [10] * 4
    assert calls == [1] and cache.misses == 1 and cache.hits == 3
    cache.get(2, lambda: 20)
    cache.get(3, lambda: 30)  # evicts 1, the least recently used
    assert cache.get(1, lambda: -1) == -1 and len(cache) == 2


def test_a_failed_computation_is_not_cached() -> None:
    cache: LruCache[str, int] = LruCache(4)

    def boom() -> int:
        raise ValueError("no")

    with pytest.raises(ValueError):
        cache.get("k", boom)
    assert cache.get("k", lambda: 7) == 7


def test_peek_and_put_keep_the_bound_and_the_order() -> None:
    cache: LruCache[str, int] = LruCache(2)
    assert cache.peek("a") is None and "a" not in cache
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.peek("a") == 1  # "a" is now the most recently used
    cache.put("c", 3)  # evicts "b"
    assert "b" not in cache and cache.peek("a") == 1 and cache.peek("c") == 3
    cache.put("a", 9)  # replacing keeps one entry
    assert len(cache) == 2 and cache.peek("a") == 9
    cache.clear()
    assert len(cache) == 0 and cache.peek("a") is None
