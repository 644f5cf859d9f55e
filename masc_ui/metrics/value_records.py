"""`MetricValue` as a plain JSON-able record (NaN -> None), the form that crosses into storage, exports and
`--json` output."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .sample import MetricValue


def metric_record(value: MetricValue) -> dict[str, Any]:
    """`{metric, value (None for NaN), reason, extras, provenance}`; safe for `json.dumps(allow_nan=False)`."""
    return {
        "metric": value.metric,
        "value": json_safe(value.value),
        "reason": value.reason,
        "extras": json_safe(value.extras),
        "provenance": json_safe(value.provenance),
    }


def json_safe(obj: Any) -> Any:
    """`obj` as plain JSON (the package's one JSON cleaner: `--json` output, provenance, extras crossing into
    storage): NaN/inf floats as None, tuples as lists, numpy scalars/arrays as Python numbers/lists, dict keys
    as str, and anything else JSON cannot hold (a `Path`, a `torch.dtype`) as its `str()`."""
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (float, np.floating)):
        return float(obj) if math.isfinite(obj) else None
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if obj is None or isinstance(obj, str):
        return obj
    if isinstance(obj, np.ndarray):
        return json_safe(obj.tolist())
    if isinstance(obj, dict):
        return {str(k): json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    return str(obj)
