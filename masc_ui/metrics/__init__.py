"""Scoring: MaSC (CP/PF + patch maps), subject strippers, the records scorers exchange, and the registry of every
metric (`list_metrics`, `get_spec`, `get_scorer`, `score_metrics`).

The names below load on first use, so that reading the registry's declarations (`masc_ui.metrics.registry`: names,
ranges, what each metric needs) costs no torch import: a command line can check its arguments at once."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .base import MetricSpec
    from .masc.engine import MaSC, MaSCResult
    from .masc.patch_maps import PatchMaps
    from .masc.strippers import strip_subject_from_prompt
    from .registry import external_metric_spec, get_scorer, get_spec, list_metrics, parse_metric_names, score_metrics
    from .sample import MetricValue, Sample

_EXPORTS = {
    "MaSC": ".masc.engine",
    "MaSCResult": ".masc.engine",
    "MetricSpec": ".base",
    "MetricValue": ".sample",
    "PatchMaps": ".masc.patch_maps",
    "Sample": ".sample",
    "external_metric_spec": ".registry",
    "get_scorer": ".registry",
    "get_spec": ".registry",
    "list_metrics": ".registry",
    "parse_metric_names": ".registry",
    "score_metrics": ".registry",
    "strip_subject_from_prompt": ".masc.strippers",
}

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


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'masc_ui.metrics' has no attribute {name!r}")
    return getattr(import_module(_EXPORTS[name], __name__), name)
