"""Text renderings of the pairwise analyses for the CLI and exports (one fixed-width block each)."""

from __future__ import annotations

import math

from .bradley_terry import BradleyTerryFit
from .elo import EloRatings
from .pairwise_accuracy import PairwiseAccuracy
from .pairwise_agreement import PairRaterAgreement
from .report import format_estimate
from .win_rate import WinRateMatrix


def format_bradley_terry(fit: BradleyTerryFit, digits: int = 3) -> str:
    """Methods by rank: log-strength theta [CI], the same on the Elo-like scale, then the tie parameter."""
    ci = (
        f"{fit.level:.0%} percentile bootstrap CI over {fit.n_pairs} output pairs, {fit.n_boot} resamples, seed "
        f"{fit.seed}" + (f", {fit.n_boot_undefined} undefined resamples left out" if fit.n_boot_undefined else "")
        if fit.n_boot
        else "no confidence intervals (n_boot=0)"
    )
    lines = [
        f"Bradley-Terry (Davidson ties) on {fit.criterion!r}: {fit.n_votes} votes, {fit.n_ties} ties ({ci})"
        + (f"; regularization {fit.regularization:g}" if fit.regularization else "")
        + (f"; {fit.n_excluded} same-method or unknown-method votes left out" if fit.n_excluded else "")
    ]
    if fit.reason is not None:
        return "\n".join(lines + [f"undefined: {fit.reason}"])
    elo = fit.elo_scale()
    rows = [
        [str(fit.rank[m]), m, format_estimate(fit.strength[m], digits), format_estimate(elo[m], 0)]
        for m in sorted(fit.methods, key=lambda m: fit.rank[m] or math.inf)
    ]
    lines += _table(["rank", "method", "theta", "Elo scale"], rows)
    lines.append(f"tie parameter nu: {format_estimate(fit.tie, digits)}")
    return "\n".join(lines)


def format_elo(elo: EloRatings) -> str:
    order = "in the given order" if not elo.shuffles else f"mean over {elo.shuffles} random orders (seed {elo.seed})"
    rows = [
        [str(elo.rank[m]), m, f"{elo.rating[m]:.1f}"]
        for m in sorted(elo.methods, key=lambda m: elo.rank[m] or math.inf)
    ]
    head = (
        f"Elo on {elo.criterion!r}: {elo.n_votes} votes {order}; K {elo.k:g}, initial {elo.initial:g}, "
        f"scale {elo.scale:g}, base {elo.base:g}"
    )
    return "\n".join([head, *_table(["rank", "method", "rating"], rows)])


def format_win_rate(matrix: WinRateMatrix, digits: int = 2) -> str:
    """Row's win rate against column (a tie = half a win), `-` where never compared."""
    rows = [
        [m, *("-" if math.isnan(v) else f"{v:.{digits}f}" for v in matrix.rate[i])]
        for i, m in enumerate(matrix.methods)
    ]
    head = f"Win rate of row vs column on {matrix.criterion!r} (ties count half)"
    return "\n".join([head, *_table(["", *matrix.methods], rows)])


def format_pair_agreement(agreement: PairRaterAgreement, digits: int = 3) -> str:
    kappa = (
        "n/a (units with different numbers of raters)"
        if math.isnan(agreement.fleiss_kappa)
        else f"{agreement.fleiss_kappa:.{digits}f}"
    )
    return "\n".join(
        [
            f"Rater agreement on {agreement.criterion!r}: {agreement.n_units} pairs judged by >= 2 raters, "
            f"{agreement.n_raters} raters, {agreement.n_judgments} judgments",
            f"  Krippendorff alpha ({agreement.level}): {format_estimate(agreement.alpha, digits)}",
            f"  percent agreement: {format_estimate(agreement.percent_agreement, digits)}",
            f"  Fleiss kappa: {kappa}",
        ]
    )


def format_pairwise_accuracy(results: list[PairwiseAccuracy], digits: int = 3) -> str:
    """One line per (criterion, metric): accuracy [CI] and the counts behind it."""
    if not results:
        return "no metric pairwise accuracy (no metric values)"
    first = results[0]
    ci = (
        f"{first.level:.0%} percentile bootstrap CI over decided pairs, {first.n_boot} resamples, seed {first.seed}"
        if first.n_boot
        else "no confidence intervals (n_boot=0)"
    )
    rows = [
        [
            r.criterion,
            r.metric,
            "up" if r.higher_is_better else "down",
            format_estimate(r.accuracy, digits),
            str(r.n_pairs),
            str(r.n_metric_ties),
            str(r.n_human_ties),
            str(r.n_missing),
        ]
        for r in results
    ]
    head = (
        f"Metric pairwise accuracy (share of human-decided pairs where the metric prefers the same output; "
        f"human ties left out, metric ties count 1/2; {ci})"
    )
    return "\n".join(
        [
            head,
            *_table(
                ["criterion", "metric", "better", "accuracy", "pairs", "metric ties", "human ties", "missing"], rows
            ),
        ]
    )


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(head[i]), *(len(r[i]) for r in rows)) if rows else len(head[i]) for i in range(len(head))]
    return ["  ".join(c.ljust(w) for c, w in zip(line, widths)).rstrip() for line in [head, *rows]]
