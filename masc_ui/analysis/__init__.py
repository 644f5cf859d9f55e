"""Agreement between metrics and human ratings (METRICS.md "Agreement between a metric and humans").

Pure and storage-free: build an `AgreementData` from per-sample records, call `agreement_table`, render
with `format_table` / `to_json`. `metric_difference` gives the paired-bootstrap CI of the difference
between two metrics; `scatter_points` the per-sample points of a metric against the mean human rating.
"""
from .alpha import interval_alpha, interval_alpha_pairs, krippendorff_alpha, metric_vs_raters_alpha
from .bootstrap import Estimate, bootstrap_indices, percentile_ci
from .correlation import kendall_tau_b, pearson, spearman
from .data import POOLED, AgreementData, AgreementRecord
from .kappa import fleiss_kappa
from .normalization import CONTINUOUS, RATING_0_4, MetricScale, normalize_metric, normalize_ratings, scale_for
from .report import format_table, to_json
from .scatter import ScatterPoints, scatter_points
from .table import HUMANS, AgreementRow, AgreementTable, MetricDifference, agreement_table, metric_difference

__all__ = [
    "AgreementData", "AgreementRecord", "AgreementRow", "AgreementTable", "CONTINUOUS", "Estimate", "HUMANS",
    "MetricDifference", "MetricScale", "POOLED", "RATING_0_4", "ScatterPoints", "agreement_table",
    "bootstrap_indices", "fleiss_kappa", "format_table", "interval_alpha", "interval_alpha_pairs",
    "kendall_tau_b", "krippendorff_alpha", "metric_difference", "metric_vs_raters_alpha", "normalize_metric",
    "normalize_ratings", "pearson", "percentile_ci", "scale_for", "scatter_points", "spearman", "to_json",
]
