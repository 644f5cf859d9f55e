"""Agreement between metrics and human ratings (METRICS.md "Agreement between a metric and humans").

Pure and storage-free: build an `AgreementData` from per-sample records, call `agreement_table`, render
with `format_table` / `to_json`. `metric_difference` gives the paired-bootstrap CI of the difference
between two metrics; `scatter_points` the per-sample points of a metric against the mean human rating.
`leaderboard` gives per method (or category) each metric's and each human criterion's mean with CIs, ranks and
the rank agreement of each metric with the humans; `with_human_column` adds a human column that is not a mean
rating (e.g. Bradley-Terry strengths); render it with `LEADERBOARD_RENDERERS` (md, csv, latex) and plot it with
`leaderboard_matrix`.

Pairwise judgments (`PairwiseData` of `PairJudgment`s: which of two outputs is better, per criterion) give
method strengths by Davidson-Bradley-Terry (`bradley_terry`), arena-style Elo (`elo_ratings`), the win-rate
matrix (`win_rate_matrix`), agreement among raters (`pairwise_rater_agreement`) and each metric's pairwise
accuracy against the human decisions (`pairwise_accuracy`). `plan_pairs` / `next_pair` assign pairwise tasks;
`format_*` render the pairwise results as text.
"""

from .alpha import interval_alpha, interval_alpha_pairs, krippendorff_alpha, metric_vs_raters_alpha
from .bootstrap import MAX_N_BOOT, Estimate, bootstrap_indices, percentile_ci
from .bradley_terry import BradleyTerryFit, bradley_terry, davidson_probabilities
from .correlation import kendall_tau_b, pearson, spearman
from .data import POOLED, AgreementData, AgreementRecord
from .elo import EloRatings, elo_ratings
from .kappa import fleiss_kappa
from .leaderboard import Leaderboard, LeaderboardCell, LeaderboardRow, RankAgreement, leaderboard
from .leaderboard_columns import HumanColumn, with_human_column
from .leaderboard_matrix import LeaderboardMatrix, leaderboard_matrix
from .leaderboard_render import RENDERERS as LEADERBOARD_RENDERERS
from .leaderboard_render import leaderboard_csv, leaderboard_latex, leaderboard_markdown, rank_agreement_csv
from .normalization import CONTINUOUS, RATING_0_4, MetricScale, normalize_metric, normalize_ratings, scale_for
from .pair_planner import OutputPair, PairCandidate, PairPlan, PairTask, next_pair, plan_pairs
from .pairwise_accuracy import PairwiseAccuracy, pairwise_accuracy
from .pairwise_agreement import PairRaterAgreement, pairwise_rater_agreement
from .pairwise_data import PairJudgment, PairwiseData
from .pairwise_report import (
    format_bradley_terry,
    format_elo,
    format_pair_agreement,
    format_pairwise_accuracy,
    format_win_rate,
)
from .ranking import competition_ranks
from .report import format_table, to_json
from .scatter import ScatterPoints, scatter_points
from .table import HUMANS, AgreementRow, AgreementTable, MetricDifference, agreement_table, metric_difference
from .win_rate import WinRateMatrix, win_rate_matrix

__all__ = [
    "AgreementData",
    "AgreementRecord",
    "AgreementRow",
    "AgreementTable",
    "BradleyTerryFit",
    "CONTINUOUS",
    "EloRatings",
    "Estimate",
    "HUMANS",
    "HumanColumn",
    "with_human_column",
    "PairJudgment",
    "PairRaterAgreement",
    "PairwiseAccuracy",
    "PairwiseData",
    "WinRateMatrix",
    "bradley_terry",
    "davidson_probabilities",
    "elo_ratings",
    "pairwise_accuracy",
    "pairwise_rater_agreement",
    "win_rate_matrix",
    "OutputPair",
    "PairCandidate",
    "PairPlan",
    "PairTask",
    "next_pair",
    "plan_pairs",
    "format_bradley_terry",
    "format_elo",
    "format_pair_agreement",
    "format_pairwise_accuracy",
    "format_win_rate",
    "LEADERBOARD_RENDERERS",
    "Leaderboard",
    "LeaderboardCell",
    "LeaderboardMatrix",
    "LeaderboardRow",
    "MAX_N_BOOT",
    "MetricDifference",
    "MetricScale",
    "POOLED",
    "RATING_0_4",
    "RankAgreement",
    "ScatterPoints",
    "agreement_table",
    "bootstrap_indices",
    "competition_ranks",
    "fleiss_kappa",
    "format_table",
    "interval_alpha",
    "interval_alpha_pairs",
    "kendall_tau_b",
    "krippendorff_alpha",
    "leaderboard",
    "leaderboard_csv",
    "leaderboard_latex",
    "leaderboard_markdown",
    "leaderboard_matrix",
    "metric_difference",
    "metric_vs_raters_alpha",
    "normalize_metric",
    "normalize_ratings",
    "pearson",
    "percentile_ci",
    "rank_agreement_csv",
    "scale_for",
    "scatter_points",
    "spearman",
    "to_json",
]
