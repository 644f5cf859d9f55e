"""Ranks of methods by a score: the one direction and tie rule of every ranking table (leaderboard,
Bradley-Terry, Elo).

Convention: rank 1 = best. The score is first turned so that larger is better (negated when lower is
better); equal scores share the best rank of their block and the next rank skips (competition ranking
"1224", `scipy.stats.rankdata(-score, method="min")`). Equality is exact float equality. An undefined
(NaN) score gets no rank (None) and does not take a place.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata

from ..errors import InputError


def competition_ranks(scores: np.ndarray, higher_is_better: bool = True) -> list[int | None]:
    """Ranks (1 = best) of `scores` (1-D float, NaN = undefined), per the module's convention."""
    values = np.asarray(scores, dtype=np.float64)
    if values.ndim != 1:
        raise InputError(f"competition_ranks takes a 1-D array of scores; got shape {values.shape}")
    out: list[int | None] = [None] * values.size
    defined = np.flatnonzero(~np.isnan(values))
    if defined.size:
        better_first = -values[defined] if higher_is_better else values[defined]
        for position, rank in zip(defined, rankdata(better_first, method="min")):
            out[position] = int(rank)
    return out
