"""The bounded embedding cache: LRU eviction, one compute call for the distinct missing items, duplicates."""

from __future__ import annotations

import numpy as np
import pytest

from masc_ui.errors import InputError
from masc_ui.metrics.embedding_cache import EmbeddingCache


def test_computes_distinct_missing_items_once_in_order():
    cache = EmbeddingCache(8)
    calls = []

    def compute(items):
        calls.append(list(items))
        return np.array([[float(i), 1.0] for i in items])

    got = cache.get_or_compute_many(["a", "b", "a", "c"], [1, 2, 1, 3], compute)
    assert calls == [[1, 2, 3]]
    np.testing.assert_array_equal(got[:, 0], [1, 2, 1, 3])
    assert got.dtype == np.float32
    got = cache.get_or_compute_many(["c", "d"], [3, 4], compute)
    assert calls[-1] == [4] and got[:, 0].tolist() == [3, 4]
    cache.get_or_compute_many(["a", "b"], [1, 2], compute)
    assert len(calls) == 2


def test_least_recently_used_is_evicted():
    cache = EmbeddingCache(2)
    cache.put("a", np.zeros(2, np.float32))
    cache.put("b", np.ones(2, np.float32))
    assert cache.get("a") is not None  # "a" is now the most recent
    cache.put("c", np.ones(2, np.float32))
    assert cache.get("b") is None and cache.get("a") is not None and len(cache) == 2
    cache.clear()
    assert len(cache) == 0


def test_size_must_be_positive():
    with pytest.raises(InputError, match="cache size"):
        EmbeddingCache(0)
