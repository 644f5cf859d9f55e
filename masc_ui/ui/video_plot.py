"""The per-frame figure of a video output (matplotlib): one small panel per metric, its value on each sampled frame
over time, the video's value as a dashed line, the selected frame marked."""

from __future__ import annotations

import math
from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from ..workbench.video import FrameSeries  # noqa: E402

COLUMNS = 2
"""Panels per row (each metric keeps its own y range: CP in [-1, 1] and PickScore in tens share no axis)."""


def frame_series_figure(series: Sequence[FrameSeries], *, selected_time_s: float | None = None, demo: bool = False):
    """A figure with one panel per `series` (x: time in seconds; y: the metric's value on each sampled frame, None
    values left out; dashed: the video's value), `selected_time_s` drawn as a vertical line; None when `series` is
    empty (nothing per frame to plot)."""
    if not series:
        return None
    rows = math.ceil(len(series) / COLUMNS)
    cols = min(COLUMNS, len(series))
    fig, axes = plt.subplots(rows, cols, figsize=(11, 1.9 * rows + 0.4), dpi=90, squeeze=False)
    for ax, s in zip(axes.flat, series):
        points = [(t, v) for t, v in zip(s.times_s, s.values) if v is not None]
        if points:
            ax.plot([p[0] for p in points], [p[1] for p in points], "o-", ms=3, lw=1.2, color="#3b528b")
        else:
            ax.text(0.5, 0.5, "no frame has a value", ha="center", va="center", transform=ax.transAxes, fontsize=8)
        if s.value is not None:
            ax.axhline(s.value, ls="--", lw=1, color="#21908d", label=f"video {s.value:.4g}")
            ax.legend(fontsize=7, loc="best")
        if selected_time_s is not None:
            ax.axvline(selected_time_s, color="#d1495b", lw=1)
        arrow = "↑" if s.higher_is_better else "↓"
        ax.set_title(f"{s.display_name} {arrow} (per frame)", fontsize=9)
        ax.tick_params(labelsize=7)
        ax.ticklabel_format(axis="y", useOffset=False)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(series) :]:
        fig.delaxes(ax)
    for ax in list(axes.flat)[: len(series)]:
        ax.set_xlabel("time in the video (s)", fontsize=7)
    if demo:
        fig.suptitle("demo weights: numbers are not meaningful", color="#b35c00", fontsize=10, x=0.98, ha="right")
    fig.tight_layout()
    return fig
