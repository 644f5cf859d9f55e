"""The leaderboard's figure (matplotlib): one small panel per column (metric or human column), the groups on the
x axis, each group's mean as a bar with its 95% CI as an error bar, the best group (rank 1) highlighted. Panels
have their own y axes (metrics live on different scales)."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from ..workbench.agreement import shown_name
from ..workbench.leaderboard import LeaderboardView  # noqa: E402

COLUMNS_PER_ROW = 3
BEST, OTHER = "#21908d", "#9aa8c7"


def leaderboard_figure(view: LeaderboardView, *, demo: bool = False):
    """Groups x (metrics, then human columns) of `view`; error bars from the board's bootstrap CIs."""
    board = view.board
    panels = [
        (m, f"{shown_name(m)} {'↑' if board.higher_is_better[m] else '↓'}", [r.metrics[m] for r in board.rows])
        for m in board.metrics
    ]
    panels += [(c, f"human {c} ↑", [r.humans[c] for r in board.rows]) for c in board.criteria]
    ncols = max(1, min(COLUMNS_PER_ROW, len(panels)))
    nrows = max(1, math.ceil(len(panels) / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.3 * ncols, 2.9 * nrows + 0.4), dpi=90, squeeze=False)
    groups = board.groups
    xs = np.arange(len(groups))
    for ax, (_, title, cells) in zip(axes.flat, panels):
        means = np.array([c.mean.value for c in cells], dtype=float)
        lo = np.array([c.mean.ci_low for c in cells], dtype=float)
        hi = np.array([c.mean.ci_high for c in cells], dtype=float)
        err = np.vstack([np.nan_to_num(means - lo), np.nan_to_num(hi - means)])
        colours = [BEST if c.rank == 1 else OTHER for c in cells]
        ax.bar(xs, np.nan_to_num(means), color=colours, width=0.6)
        ax.errorbar(xs, np.nan_to_num(means), yerr=err, fmt="none", ecolor="#333333", capsize=3, lw=1)
        finite = np.concatenate([means, lo, hi])
        finite = finite[np.isfinite(finite)]
        if finite.size:
            low, high = min(0.0, finite.min()), max(0.0, finite.max())
            pad = 0.08 * (high - low or 1.0)
            ax.set_ylim(low - (pad if low < 0 else 0), high + pad)
        ax.axhline(0, color="#888888", lw=0.6)
        ax.set_title(title, fontsize=9)
        ax.set_xticks(
            xs, groups, rotation=30 if len(groups) > 3 else 0, ha="right" if len(groups) > 3 else "center", fontsize=8
        )
        ax.tick_params(axis="y", labelsize=8)
    for ax in list(axes.flat)[len(panels) :]:
        ax.set_axis_off()
    ci = f"bars: {board.level:.0%} bootstrap CI" if board.n_boot else "no CIs (0 resamples)"
    fig.suptitle(
        f"mean per {board.by} ({ci}; darker = rank 1)"
        + ("  —  demo weights: numbers are not meaningful" if demo else ""),
        fontsize=10,
        color="#b35c00" if demo else "black",
    )
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    return fig
