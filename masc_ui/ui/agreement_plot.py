"""Agreement figures (matplotlib): metric vs mean human rating with CI bars, and each metric's alpha with its
CI against the human-vs-human ceiling."""

from __future__ import annotations

import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from ..workbench.agreement import AgreementView, ScatterSeries, shown_name  # noqa: E402


def agreement_figure(view: AgreementView, series: ScatterSeries | None, *, demo: bool = False):
    """Left: `series` (metric value on x, mean human rating 0-4 on y, 95% CI bars of the mean). Right: each
    metric's pooled Krippendorff alpha with its bootstrap CI, the human-vs-human alpha as a dashed ceiling."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2), dpi=90)
    if series is not None and len(series.values):
        yerr = np.where(np.isnan(series.half_width), 0.0, series.half_width)
        left.errorbar(
            series.values,
            series.human_mean,
            yerr=yerr,
            fmt="o",
            ms=5,
            capsize=3,
            alpha=0.8,
            color="#3b528b",
            ecolor="#9aa8c7",
        )
        name = shown_name(series.metric)
        left.set_xlabel(f"{name} (raw value)")
        left.set_ylabel(f"mean human {series.criterion.upper()} rating (0-4)")
        left.set_ylim(-0.2, 4.2)
        left.set_title(f"{name} vs humans ({len(series.values)} samples;\nbars: 95% CI of the mean)", fontsize=9)
    else:
        left.text(0.5, 0.5, "no sample has both a value of this metric and a rating", ha="center", va="center")
        left.set_axis_off()
    pooled = [r for r in view.table.rows if r.group == view.table.groups[0]]
    metrics = [r for r in pooled if not r.is_human]
    humans = next((r for r in pooled if r.is_human), None)
    xs = np.arange(len(metrics))
    vals = np.array([r.alpha.value for r in metrics], dtype=float)
    lo = np.array([r.alpha.ci_low for r in metrics], dtype=float)
    hi = np.array([r.alpha.ci_high for r in metrics], dtype=float)
    err = np.vstack([np.nan_to_num(vals - lo), np.nan_to_num(hi - vals)])
    right.errorbar(xs, vals, yerr=err, fmt="s", capsize=4, color="#21908d")
    right.set_xticks(xs, [shown_name(r.metric) for r in metrics], rotation=30, ha="right", fontsize=8)
    right.set_ylabel("Krippendorff's alpha (interval)")
    if humans is not None and not math.isnan(humans.alpha.value):
        right.axhline(humans.alpha.value, ls="--", color="#d1495b", label=f"human vs human {humans.alpha.value:.2f}")
        if not math.isnan(humans.alpha.ci_low):
            right.axhspan(humans.alpha.ci_low, humans.alpha.ci_high, color="#d1495b", alpha=0.12)
        right.legend(fontsize=8, loc="lower right")
    right.set_title(f"agreement with humans ({view.table.criterion.upper()}),\n95% bootstrap CI", fontsize=9)
    if demo:
        fig.suptitle("demo weights: numbers are not meaningful", color="#b35c00", fontsize=10)
    fig.tight_layout()
    return fig
