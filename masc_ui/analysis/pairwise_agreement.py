"""Inter-rater agreement on pairwise judgments.

Units: the output pairs of one criterion judged by at least two raters (a pair judged once is not pairable and
is left out). Each judgment is put in the pair's canonical orientation first (raters saw random left/right
orders), coded a better = 0, tie = 1, b better = 2. Statistics:
- Krippendorff's alpha of that (raters x units) table, `nominal` by default (three unordered answers);
  `ordinal` treats a tie as lying between the two wins. Through `alpha.krippendorff_alpha` (the `krippendorff`
  package); CI by the percentile bootstrap over units.
- Percent agreement: per unit, the share of its rater pairs that gave the same answer,
  sum_c n_uc (n_uc - 1) / (m_u (m_u - 1)), averaged over units (each unit weighs the same); bootstrap CI
  from the same resamples.
- Fleiss' kappa (`kappa.fleiss_kappa`) when every unit has the same number of judgments; NaN otherwise
  (its chance correction assumes a fixed number of raters per unit).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .alpha import LEVELS, krippendorff_alpha, krippendorff_alpha_resampled
from .bootstrap import (
    DEFAULT_LEVEL,
    DEFAULT_N_BOOT,
    Estimate,
    bootstrap_index_chunks,
    check_resamples,
    estimate,
    resample_counts,
)
from .kappa import fleiss_kappa
from .pairwise_data import PairwiseData

OUTCOMES = 3


@dataclass(frozen=True)
class PairRaterAgreement:
    criterion: str
    level: str
    """Krippendorff level of measurement of `alpha`."""
    n_units: int
    """Output pairs judged by at least two raters."""
    n_raters: int
    """Raters with a judgment on one of those units."""
    n_judgments: int
    """Judgments on those units."""
    alpha: Estimate
    percent_agreement: Estimate
    fleiss_kappa: float
    """NaN unless every unit has the same number of judgments."""
    n_boot: int
    seed: int | None
    confidence: float


def pairwise_rater_agreement(
    data: PairwiseData,
    criterion: str,
    level: str = "nominal",
    n_boot: int = DEFAULT_N_BOOT,
    seed: int | None = 0,
    confidence: float = DEFAULT_LEVEL,
) -> PairRaterAgreement:
    """Agreement among the raters of `criterion`'s pairs (see the module docstring).

    Raises:
        InputError: no judgments for `criterion`, unknown `level`, bad bootstrap arguments.
    """
    if level not in LEVELS:
        raise InputError(f"alpha level of measurement must be one of {', '.join(LEVELS)}; got {level!r}")
    check_resamples(n_boot, confidence)
    votes = data.votes(criterion)
    table = np.full((len(votes.raters), len(votes.pairs)), np.nan)
    table[votes.rater, votes.pair] = votes.outcome
    judged = (~np.isnan(table)).sum(axis=0)
    table = table[:, judged >= 2]
    table = table[(~np.isnan(table)).any(axis=1)]
    n_units = table.shape[1]
    if n_units == 0:
        nan = Estimate(float("nan"), float("nan"), float("nan"))
        return PairRaterAgreement(criterion, level, 0, 0, 0, nan, nan, float("nan"), n_boot, seed, confidence)
    per_unit = _unit_agreement(table)
    alpha = krippendorff_alpha(table, level)
    reps_alpha = reps_agreement = None
    if n_boot:
        alphas, agreements = [], []
        for idx in bootstrap_index_chunks(n_units, n_boot, seed):
            counts = resample_counts(idx, n_units)
            alphas.append(krippendorff_alpha_resampled(table, counts, level))  # 3 values: never None
            agreements.append(counts @ per_unit / n_units)
        reps_alpha, reps_agreement = np.concatenate(alphas), np.concatenate(agreements)
    sizes = (~np.isnan(table)).sum(axis=0)
    kappa = float("nan")
    if np.all(sizes == sizes[0]):
        kappa = fleiss_kappa(np.sort(table, axis=0)[: sizes[0]].T)  # NaN sort last: each unit's judgments first
    return PairRaterAgreement(
        criterion,
        level,
        n_units,
        table.shape[0],
        int(sizes.sum()),
        estimate(alpha, reps_alpha, confidence),
        estimate(float(per_unit.mean()), reps_agreement, confidence),
        kappa,
        n_boot,
        seed,
        confidence,
    )


def _unit_agreement(table: np.ndarray) -> np.ndarray:
    """(U,) share of agreeing rater pairs per unit of a (raters, units) outcome table (NaN = not judged)."""
    counts = np.stack([(table == c).sum(axis=0) for c in range(OUTCOMES)], axis=1).astype(np.float64)
    m = counts.sum(axis=1)
    return (counts * (counts - 1)).sum(axis=1) / (m * (m - 1))
