"""The one bounded, thread-safe LRU cache of the package; each instance has an explicit owner.

Used for image embeddings by the MaSC engine (SigLIP2 encodings and texts), the CLIP/DINO backbones
(`masc_ui.metrics.embedding_cache`) and Segment Anything (`SamService`). Each missing entry is computed
once, even under concurrent requests.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from .errors import InputError

V = TypeVar("V")
T = TypeVar("T")


@dataclass(frozen=True)
class CacheInfo:
    """Counters of an `LruCache` (like `functools.lru_cache`'s `cache_info()`)."""

    hits: int
    misses: int
    evictions: int
    size: int
    maxsize: int


class LruCache(Generic[V]):
    """Keeps the `maxsize` most recently used values (`maxsize=0`: keeps nothing, every lookup computes).

    `get_or_compute(key, compute)` returns the cached value, or runs `compute()` once for that key: threads
    asking for the same missing key wait for the first one's result instead of computing it again, while
    different keys are computed in parallel. If `compute()` raises, nothing is cached and the waiting
    threads try again themselves.
    """

    def __init__(self, maxsize: int) -> None:
        if maxsize < 0:
            raise InputError(f"cache size must be >= 0, got {maxsize}")
        self.maxsize = maxsize
        self._items: OrderedDict[Hashable, V] = OrderedDict()
        self._pending: dict[Hashable, threading.Lock] = {}
        self._guard = threading.Lock()
        self._hits = self._misses = self._evictions = 0

    def get(self, key: Hashable) -> V | None:
        """The cached value (now the most recently used), or None."""
        with self._guard:
            if key in self._items:
                self._items.move_to_end(key)
                self._hits += 1
                return self._items[key]
            self._misses += 1
            return None

    def put(self, key: Hashable, value: V) -> None:
        with self._guard:
            self._store(key, value)

    def _store(self, key: Hashable, value: V) -> None:
        if self.maxsize == 0:
            return
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self.maxsize:
            self._items.popitem(last=False)
            self._evictions += 1

    def get_or_compute(self, key: Hashable, compute: Callable[[], V]) -> V:
        while True:
            with self._guard:
                if key in self._items:
                    self._items.move_to_end(key)
                    self._hits += 1
                    return self._items[key]
                pending = self._pending.get(key)
                if pending is None:
                    pending = self._pending[key] = threading.Lock()
                    pending.acquire()
                    self._misses += 1
                    break
            with pending:  # another thread is computing this key: wait for it, then look again
                pass
        try:
            value = compute()
            with self._guard:
                self._store(key, value)
            return value
        finally:
            with self._guard:
                del self._pending[key]
            pending.release()

    def get_many_or_compute(
        self, keys: Sequence[Hashable], items: Sequence[T], compute: Callable[[list[T]], Sequence[V]]
    ) -> list[V]:
        """The values of `items` (keyed by `keys`), in order: cached ones as they are, the distinct missing ones
        from ONE `compute(missing_items)` call (first-seen order), which are then cached. Values are returned even
        when the cache is smaller than the batch. Unlike `get_or_compute`, two threads missing the same key at once
        may both compute it (batches are not split to wait for each other)."""
        found: dict[Hashable, V] = {}
        todo: dict[Hashable, T] = {}
        for key, item in zip(keys, items):
            if key in found or key in todo:
                continue
            value = self.get(key)
            if value is None:
                todo[key] = item
            else:
                found[key] = value
        if todo:
            values = list(compute(list(todo.values())))
            if len(values) != len(todo):
                raise RuntimeError(f"cache compute returned {len(values)} values for {len(todo)} items")
            for key, value in zip(todo, values):
                self.put(key, value)
                found[key] = value
        return [found[key] for key in keys]

    def __contains__(self, key: Hashable) -> bool:
        with self._guard:
            return key in self._items

    def __len__(self) -> int:
        with self._guard:
            return len(self._items)

    def keys(self) -> list[Hashable]:
        """Cached keys, least recently used first."""
        with self._guard:
            return list(self._items)

    def clear(self) -> None:
        with self._guard:
            self._items.clear()

    def info(self) -> CacheInfo:
        with self._guard:
            return CacheInfo(self._hits, self._misses, self._evictions, len(self._items), self.maxsize)
