"""Batched lookups in a bounded embedding cache keyed by content hash, owned by one backbone.

A backbone (CLIP, PickScore, DINO) owns one `EmbeddingCache` for images and one for texts, so every metric
reading that backbone (CLIP-I, CLIP-I-Seg, CLIP-T, CLIPScore) shares one forward per distinct image.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

from ..caching import LruCache
from ..errors import InputError

T = TypeVar("T")


class EmbeddingCache(LruCache[NDArray[np.float32]]):
    """An `LruCache` of float32 vectors (D,) with a batched lookup (at least one entry is kept)."""

    def __init__(self, max_items: int = 4096) -> None:
        if max_items < 1:
            raise InputError(f"embedding cache size must be >= 1, got {max_items}")
        super().__init__(max_items)

    def get_or_compute_many(
        self, keys: Sequence[Hashable], items: Sequence[T], compute: Callable[[list[T]], np.ndarray]
    ) -> NDArray[np.float32]:
        """Vectors (N, D) for `items` (keyed by `keys`): cached ones as they are, the distinct missing ones in
        one `compute(missing_items) -> (M, D)` call, in first-seen order."""
        vecs = self.get_many_or_compute(
            keys, items, lambda todo: [np.ascontiguousarray(v, dtype=np.float32) for v in compute(todo)]
        )
        return np.stack(vecs) if keys else np.zeros((0, 0), np.float32)
