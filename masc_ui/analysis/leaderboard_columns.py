"""Extra human columns of a leaderboard: per-group human estimates that are not a mean 0-4 rating, such as
method strengths fitted from pairwise judgments (Bradley-Terry, Elo), shown and ranked next to the mean ratings
and compared with every metric's ranking.

`with_human_column(board, column)` returns the `Leaderboard` with the column appended to `criteria` (and to
each row's `humans`), so every renderer (`LEADERBOARD_RENDERERS`) and `leaderboard_matrix` show it as they show a
criterion. Conventions:
- A group of the leaderboard that the column does not cover gets an undefined cell (NaN, n 0, no rank); groups of
  the column that the leaderboard does not have (no pointwise sample) are left out: the rows are the samples'.
- Ranks: 1 = best, higher value is better, ties share the best rank (`competition_ranks`).
- Rank agreement of each metric with the column: Kendall tau-b over the groups where both are defined, exactly as
  for a criterion (`leaderboard._rank_agreement`, fewer than 3 groups -> NaN), but **without a CI**: the column's
  own uncertainty comes from resampling its judgments (e.g. output pairs), not the leaderboard's samples, so there
  is no paired resample to compute tau on.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .bootstrap import Estimate
from .leaderboard import Leaderboard, LeaderboardCell, _rank_agreement
from .ranking import competition_ranks


@dataclass(frozen=True)
class HumanColumn:
    """One human estimate per group, with its CI (NaN when none) and what it rests on."""

    name: str
    """Column name, used like a criterion (`human <name>` in the tables), e.g. `bt_cp`."""
    values: Mapping[str, Estimate]
    """Group (method or category) -> estimate; higher is better."""
    n: Mapping[str, int]
    """Group -> how many judgments the estimate rests on (e.g. pairwise votes involving that method)."""
    description: str = ""
    """What the column is (shown nowhere by the renderers; for the caller's caption)."""


def with_human_column(board: Leaderboard, column: HumanColumn) -> Leaderboard:
    """`board` with `column` added after its criteria (see module docstring); InputError for a name already used
    or an empty name."""
    if not column.name.strip():
        raise InputError("an extra human column needs a name, e.g. 'bt_cp'")
    if column.name in board.criteria or column.name in board.metrics:
        raise InputError(f"leaderboard already has a column {column.name!r}; give the extra human column another name")
    undefined = Estimate(math.nan, math.nan, math.nan)
    means = np.array([column.values.get(g, undefined).value for g in board.groups], dtype=np.float64)
    ranks = competition_ranks(means)
    rows = tuple(
        dataclasses.replace(
            row,
            humans={
                **row.humans,
                column.name: LeaderboardCell(
                    column.values.get(row.group, undefined), int(column.n.get(row.group, 0)), ranks[g]
                ),
            },
        )
        for g, row in enumerate(board.rows)
    )
    extra = []
    for metric in board.metrics:
        sign = 1.0 if board.higher_is_better[metric] else -1.0
        metric_means = np.array([sign * r.metrics[metric].mean.value for r in board.rows], dtype=np.float64)
        extra.append(_rank_agreement(metric, column.name, metric_means, means, None, None, board.level))
    agreement = _by_metric(board.agreement + tuple(extra), board.metrics)
    return dataclasses.replace(board, criteria=board.criteria + (column.name,), rows=rows, agreement=agreement)


def _by_metric(agreement: tuple, metrics: tuple[str, ...]) -> tuple:
    """Rank agreements ordered metrics outer (the `Leaderboard.agreement` order), criteria in their order."""
    order = {m: i for i, m in enumerate(metrics)}
    return tuple(sorted(agreement, key=lambda a: order[a.metric]))
