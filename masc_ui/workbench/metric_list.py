"""Every built-in metric grouped by the media it judges, as `masc-ui metrics` lists them (no model is loaded)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..metrics.base import MetricSpec

MEDIA_TITLES = {
    "image": "image metrics (an image output; for a video output, the mean over its sampled frames)",
    "video": "video metrics (a video output only)",
}
"""Media -> the heading its group is listed under."""


def metrics_by_media() -> dict[str, list[MetricSpec]]:
    """media (`image`, then `video`) -> its metrics in the registry's display order."""
    from ..metrics.registry import list_metrics

    return {media: list_metrics(media) for media in MEDIA_TITLES}


def spec_record(spec: MetricSpec) -> dict[str, Any]:
    """A metric's declaration as plain JSON-able data (every field, `media` included)."""
    return dataclasses.asdict(spec)
