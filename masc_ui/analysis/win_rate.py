"""The win-rate matrix of methods from pairwise votes.

Counts are per vote (every rater's vote on every output pair), votes between two different known methods only:
    wins[i, j] = votes in which i beat j,   ties[i, j] = ties[j, i] = votes i and j tied,
    rate[i, j] = (wins[i, j] + ties[i, j] / 2) / (wins[i, j] + wins[j, i] + ties[i, j]),
a tie counting half a win for each side, so rate[i, j] + rate[j, i] = 1. NaN on the diagonal and where i and
j were never compared.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .pairwise_data import A_WINS, B_WINS, TIE, PairwiseData, method_votes


@dataclass(frozen=True)
class WinRateMatrix:
    criterion: str
    methods: tuple[str, ...]
    """Row/column labels, sorted."""
    wins: np.ndarray
    """int64 (M, M): votes row beat column."""
    ties: np.ndarray
    """int64 (M, M), symmetric."""
    rate: np.ndarray
    """float64 (M, M): row's win rate against column (see module docstring)."""
    n_excluded: int


def win_rate_matrix(data: PairwiseData, criterion: str) -> WinRateMatrix:
    """The win-rate matrix of the votes of `criterion`. InputError when it has no judgments."""
    votes = method_votes(data.votes(criterion))
    m = len(votes.methods)
    wins = np.zeros((m, m), dtype=np.int64)
    ties = np.zeros((m, m), dtype=np.int64)
    np.add.at(wins, (votes.first[votes.outcome == A_WINS], votes.second[votes.outcome == A_WINS]), 1)
    np.add.at(wins, (votes.second[votes.outcome == B_WINS], votes.first[votes.outcome == B_WINS]), 1)
    np.add.at(ties, (votes.first[votes.outcome == TIE], votes.second[votes.outcome == TIE]), 1)
    ties = ties + ties.T
    total = wins + wins.T + ties
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.where(total > 0, (wins + 0.5 * ties) / total, np.nan)
    np.fill_diagonal(rate, np.nan)
    return WinRateMatrix(criterion, votes.methods, wins, ties, rate, votes.n_excluded)
