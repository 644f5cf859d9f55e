"""Batched lookups in a bounded embedding cache keyed by content hash, owned by one backbone.

A backbone (CLIP, PickScore, DINO) owns one `EmbeddingCache` for images and one for texts, so every metric
reading that backbone (CLIP-I, CLIP-I-Seg, CLIP-T, CLIPScore) shares one forward per distinct image.
"""
from __future__ import annotations

from typing import Callable, Hashable, Sequence

import numpy as np

from ..caching import LruCache
from ..errors import InputError


class EmbeddingCache(LruCache[np.ndarray]):
    """An `LruCache` of float32 vectors (D,) with a batched lookup (at least one entry is kept)."""

    def __init__(self, max_items: int = 4096) -> None:
        if max_items < 1:
            raise InputError(f"embedding cache size must be >= 1, got {max_items}")
        super().__init__(max_items)

    def get_or_compute_many(self, keys: Sequence[Hashable], items: Sequence[object],
                            compute: Callable[[list[object]], np.ndarray]) -> np.ndarray:
        """Vectors (N, D) for `items` (keyed by `keys`): cached ones as they are, the distinct missing ones in
        one `compute(missing_items) -> (M, D)` call, in first-seen order."""
        found: dict[Hashable, np.ndarray] = {}
        todo: dict[Hashable, object] = {}
        for key, item in zip(keys, items):
            if key in found or key in todo:
                continue
            vec = self.get(key)
            if vec is None:
                todo[key] = item
            else:
                found[key] = vec
        if todo:
            vecs = compute(list(todo.values()))
            for key, vec in zip(todo, vecs):
                vec = np.ascontiguousarray(vec, dtype=np.float32)
                self.put(key, vec)
                found[key] = vec
        return np.stack([found[key] for key in keys]) if keys else np.zeros((0, 0), np.float32)
