"""The leaderboard of a stored dataset (`masc-ui leaderboard`; the app's Leaderboard view calls the same): per
method (or category) every metric's mean and each criterion's mean human rating with bootstrap 95% CIs, n and
ranks, the rank agreement (Kendall tau-b) of each metric with the humans, and the methods x metrics matrix for a
plot. The statistics are `masc_ui.analysis.leaderboard` (conventions there and in README "Leaderboard"); this
use case reads the stored values and ratings, takes each metric's direction from the registry, and appends the
extra human columns it is given (e.g. Bradley-Terry strengths from pairwise judgments)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

from ..errors import InputError
from .agreement import agreement_data
from .database import Database

LEADERBOARD_FORMATS = ("md", "csv", "latex")


@dataclass(frozen=True)
class LeaderboardView:
    """One leaderboard of the stored data and everything shown from it."""

    dataset: str | None
    board: Any
    """`masc_ui.analysis.Leaderboard` (extra human columns included, as criteria)."""
    matrix: Any
    """`masc_ui.analysis.LeaderboardMatrix`: groups x (metrics, then human columns), raw and 0..1 (1 = best)."""

    def render(self, fmt: str) -> str:
        """The leaderboard as Markdown (`md`, with the rank-agreement table), CSV (`csv`, the leaderboard only; see
        `rank_agreement_csv`) or LaTeX booktabs (`latex`, with the rank-agreement table)."""
        from ..analysis import LEADERBOARD_RENDERERS

        if fmt not in LEADERBOARD_RENDERERS:
            raise InputError(f"leaderboard format must be one of {', '.join(LEADERBOARD_RENDERERS)}; got {fmt!r}")
        return LEADERBOARD_RENDERERS[fmt](self.board)

    def rank_agreement_csv(self) -> str:
        """One row per (metric, human column): metric, criterion, n_groups, tau, ci_low, ci_high."""
        from ..analysis import rank_agreement_csv

        return rank_agreement_csv(self.board)


def leaderboard_view(database: Database, *, user: str | None, dataset: str | None, by: str = "method",
                     metrics: Sequence[str] | None = None, criteria: Sequence[str] | None = None,
                     n_boot: int = 2000, seed: int = 0, extra_columns: Sequence[Any] = ()) -> LeaderboardView:
    """The leaderboard of `dataset` (None = every dataset) grouped `by` method or category.

    Args:
        metrics: metric names (default: every metric with a stored value); criteria: rated criteria (default:
            every criterion with a rating; [] = metrics only).
        n_boot: bootstrap resamples per group (0..`MAX_N_BOOT`, 0 = no CIs); seed: their seed.
        extra_columns: `masc_ui.analysis.HumanColumn`s appended after the criteria (ranked, compared with every
            metric by Kendall tau-b; see `masc_ui.analysis.leaderboard_columns`).
    Raises:
        InputError: unknown dataset, no samples, unknown metric / criterion, bad `by` / `n_boot` / `seed`.
    """
    from ..analysis import leaderboard, leaderboard_matrix
    from ..analysis.leaderboard_columns import with_human_column

    data = agreement_data(database, user=user, dataset=dataset)
    if not data.records:
        where = f"dataset {dataset!r}" if dataset else "the database"
        raise InputError(f"{where} has no samples yet: import or save samples, score them, then rate them")
    names = list(metrics) if metrics else list(data.metric_names)
    board = leaderboard(data, metrics, criteria, by=by, higher_is_better=metric_directions(names),
                        n_boot=n_boot, seed=seed)
    for column in extra_columns:
        board = with_human_column(board, column)
    return LeaderboardView(dataset, board, leaderboard_matrix(board))


def metric_directions(names: Sequence[str]) -> dict[str, bool]:
    """metric -> higher is better, from the registry (image and video metrics); names it does not know (imported
    judges such as `gpt4o_cp`) are higher-is-better, as the leaderboard assumes."""
    from ..metrics.registry import list_metrics

    known = {spec.name: spec.higher_is_better for spec in list_metrics(None)}
    return {name: known.get(name, True) for name in names}


def matrix_rows(view: LeaderboardView) -> tuple[list[str], list[list[Any]]]:
    """Long-format rows for a methods x metrics plot (heat map or grouped bars): group, column, higher is better,
    mean (raw), normalized (0..1 within the column, 1 = best group; None where undefined)."""
    m = view.matrix
    headers = [view.board.by, "column", "higher_is_better", "mean", "normalized"]
    rows = [[group, column, m.higher_is_better[k], _number(m.means[g, k]), _number(m.normalized[g, k])]
            for g, group in enumerate(m.groups) for k, column in enumerate(m.columns)]
    return headers, rows


def _number(x: float) -> float | None:
    return None if math.isnan(x) else float(x)
