"""Pure math on embeddings: cosines of unit vectors and the published rescalings. float32 throughout."""
from __future__ import annotations

import numpy as np

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
