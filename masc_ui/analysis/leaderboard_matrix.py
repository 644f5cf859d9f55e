"""A plot-ready groups x metrics matrix of a `Leaderboard` (a heat map of methods x metrics).

Normalization, per column: the direction-adjusted mean s * mean (s = -1 for a lower-is-better metric, +1
otherwise and for human criteria) is min-max scaled over the groups,
    normalized[g, k] = (s x[g, k] - min_g s x[., k]) / (max_g s x[., k] - min_g s x[., k]),
so 1 = the best group of that column, 0 = the worst, whatever the metric's range or direction. NaN where
the mean is undefined, and in a whole column whose defined means are all equal (no spread to scale).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from .leaderboard import Leaderboard
from .normalization import minmax

HUMAN_COLUMN_PREFIX = "human "


@dataclass(frozen=True)
class LeaderboardMatrix:
    groups: tuple[str, ...]
    """Row labels (methods or categories), the leaderboard's order."""
    columns: tuple[str, ...]
    """Column labels: metric names, then `human <criterion>`."""
    higher_is_better: tuple[bool, ...]
    """Direction of each column."""
    means: np.ndarray
    """float64 (groups, columns): raw means (NaN = undefined)."""
    normalized: np.ndarray
    """float64 (groups, columns) in [0, 1], 1 = best (see module docstring)."""


def leaderboard_matrix(board: Leaderboard, include_humans: bool = True) -> LeaderboardMatrix:
    """The groups x metrics (then human criteria, when `include_humans`) matrix of `board`."""
    columns = list(board.metrics)
    directions = [board.higher_is_better[m] for m in board.metrics]
    means = [[r.metrics[m].mean.value for m in board.metrics] for r in board.rows]
    if include_humans:
        columns += [f"{HUMAN_COLUMN_PREFIX}{c}" for c in board.criteria]
        directions += [True] * len(board.criteria)
        means = [row + [r.humans[c].mean.value for c in board.criteria] for row, r in zip(means, board.rows)]
    raw = np.array(means, dtype=np.float64).reshape(len(board.rows), len(columns))
    signs = np.where(directions, 1.0, -1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN column stays NaN
        normalized = minmax(raw * signs, axis=0) if raw.size else raw.copy()
    return LeaderboardMatrix(tuple(board.groups), tuple(columns), tuple(directions), raw, normalized)
