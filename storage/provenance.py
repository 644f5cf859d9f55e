"""Provenance keys and JSON hygiene for metric values.

A provenance key identifies *how* a value was computed, independent of *when* and *where*: the SHA-256
of the canonical JSON of model id, model revision, parameters and dtype. Code version and device are
recorded with every value but are not part of the key (a new commit or another GPU does not make old
values stale). Which masks a value used is recorded separately (`MetricValueRecord.mask_version_ids`).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from typing import Any

from .errors import InvalidInput
from .record_types import Provenance


def canonical_json(data: Any) -> str:
    """Deterministic JSON (sorted keys, no spaces); raises InvalidInput for values JSON cannot hold."""
    try:
        return json.dumps(data, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(
            f"value is not JSON-serialisable ({exc}); pass plain dicts, lists, str, int, float, bool or None"
        ) from exc


def json_safe(data: Any, *, name: str) -> Any:
    """`data` with every NaN/inf float replaced by None, checked to be JSON-serialisable.

    Raises InvalidInput naming `name` when something in it is not plain JSON (e.g. a numpy array).
    """
    cleaned = _replace_non_finite(data)
    try:
        json.dumps(cleaned, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(
            f"{name} must be JSON-serialisable (dicts, lists, str, int, float, bool, None): "
            f"{exc}; convert arrays with .tolist()"
        ) from exc
    return cleaned


def _replace_non_finite(data: Any) -> Any:
    if isinstance(data, float) and not math.isfinite(data):
        return None
    if isinstance(data, Mapping):
        return {k: _replace_non_finite(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [_replace_non_finite(v) for v in data]
    return data


def as_provenance(value: Provenance | Mapping[str, Any]) -> Provenance:
    """Accept a Provenance or the metric engine's provenance dict."""
    if isinstance(value, Provenance):
        return value
    return Provenance.from_mapping(value)


def provenance_key(provenance: Provenance | Mapping[str, Any]) -> str:
    """64-hex SHA-256 identifying model id, revision, params and dtype of `provenance`."""
    p = as_provenance(provenance)
    body = {
        "model_id": p.model_id,
        "revision": p.revision,
        "params": json_safe(dict(p.params), name="provenance params"),
        "dtype": p.dtype,
    }
    return hashlib.sha256(canonical_json(body).encode()).hexdigest()
