"""Scoring: MaSC (CP/PF + patch maps), subject strippers, the records scorers exchange, and the registry of every
metric (`list_metrics`, `get_spec`, `get_scorer`, `score_metrics`)."""

from .base import MetricSpec
from .masc.engine import MaSC, MaSCResult
from .masc.patch_maps import PatchMaps
from .masc.strippers import strip_subject_from_prompt
from .registry import external_metric_spec, get_scorer, get_spec, list_metrics, parse_metric_names, score_metrics
from .sample import MetricValue, Sample

__all__ = [
    "MaSC",
    "MaSCResult",
    "MetricSpec",
    "MetricValue",
    "PatchMaps",
    "Sample",
    "external_metric_spec",
    "get_scorer",
    "get_spec",
    "list_metrics",
    "parse_metric_names",
    "score_metrics",
    "strip_subject_from_prompt",
]
