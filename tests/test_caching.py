"""The bounded LRU cache behind the SAM embedding cache."""

from __future__ import annotations

import threading
import time

import pytest

from masc_ui.caching import LruCache


def test_lru_evicts_the_least_recently_used():
    cache: LruCache[str] = LruCache(2)
    cache.get_or_compute("a", lambda: "A")
    cache.get_or_compute("b", lambda: "B")
    assert cache.get_or_compute("a", lambda: "never") == "A"  # a is now the most recent
    cache.get_or_compute("c", lambda: "C")  # evicts b
    assert cache.keys() == ["a", "c"]
    assert "b" not in cache
    info = cache.info()
    assert (info.hits, info.misses, info.evictions, info.size, info.maxsize) == (1, 3, 1, 2, 2)


def test_failed_compute_is_not_cached():
    cache: LruCache[int] = LruCache(1)

    def boom() -> int:
        raise RuntimeError("encoder crashed")

    with pytest.raises(RuntimeError):
        cache.get_or_compute("k", boom)
    assert cache.get_or_compute("k", lambda: 7) == 7


def test_concurrent_requests_compute_each_key_once():
    cache: LruCache[int] = LruCache(4)
    calls = []
    gate = threading.Event()

    def slow() -> int:
        calls.append(1)
        gate.wait(5)
        return 42

    results = []
    threads = [threading.Thread(target=lambda: results.append(cache.get_or_compute("img", slow))) for _ in range(6)]
    for t in threads:
        t.start()
    while not calls:
        time.sleep(0.001)
    gate.set()
    for t in threads:
        t.join()
    assert results == [42] * 6 and len(calls) == 1


def test_size_zero_keeps_nothing_and_negative_is_refused():
    cache: LruCache[int] = LruCache(0)
    calls = []
    assert cache.get_or_compute("k", lambda: calls.append(1) or 7) == 7
    assert cache.get_or_compute("k", lambda: calls.append(1) or 7) == 7
    cache.put("k", 7)
    assert len(calls) == 2 and len(cache) == 0 and cache.get("k") is None
    with pytest.raises(ValueError, match=">= 0"):
        LruCache(-1)


def test_get_and_put_count_hits_and_evict():
    cache: LruCache[str] = LruCache(1)
    assert cache.get("a") is None
    cache.put("a", "A")
    assert cache.get("a") == "A"
    cache.put("b", "B")
    assert cache.get("a") is None and cache.get("b") == "B"
    info = cache.info()
    assert (info.hits, info.misses, info.evictions, info.size) == (2, 2, 1, 1)
