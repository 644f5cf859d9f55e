"""Pure math on embeddings: cosines of unit vectors and the published rescalings. float32 throughout."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np

ImageT = TypeVar("ImageT")
"""Whatever the `embed` of `reference_cosines` reads (PIL or `InputImage`s)."""

CLIPSCORE_WEIGHT = 2.5
"""Hessel et al. 2021's w in CLIPScore = w * max(cos, 0)."""


def cosines(query: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """(R,) float32 cosines of one unit vector `query` (D,) with each unit row of `keys` (R, D)."""
    return (np.asarray(keys, np.float32) @ np.asarray(query, np.float32)).astype(np.float32)


def clipscore(cos: float, weight: float = CLIPSCORE_WEIGHT) -> float:
    """CLIPScore (Hessel et al. 2021) = weight * max(cos, 0)."""
    return float(weight * max(float(cos), 0.0))


def pickscore(cos: float, logit_scale: float) -> float:
    """PickScore (Kirstain et al. 2023) = logit_scale.exp() * cos; `logit_scale` is already exponentiated."""
    return float(logit_scale * float(cos))


def reference_cosines(
    embed: Callable[[list[ImageT]], np.ndarray], pairs: Sequence[tuple[ImageT, Sequence[ImageT]]]
) -> list[tuple[float, list[float]]]:
    """For each (output, references) pair: (mean over references of cos(out, ref), the per-reference cosines).
    `embed(images) -> (N, D)` unit vectors is called once for all the images of all pairs."""
    images = [out for out, _ in pairs] + [ref for _, refs in pairs for ref in refs]
    emb = embed(images) if images else np.zeros((0, 0), np.float32)
    results, start = [], len(pairs)
    for k, (_, refs) in enumerate(pairs):
        per_ref = cosines(emb[k], emb[start : start + len(refs)])
        start += len(refs)
        results.append((float(np.mean(per_ref)), [float(c) for c in per_ref]))
    return results
