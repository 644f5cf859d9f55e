"""The thin stateful shell shared by the video scorers (GmeScore, NexusScore, NaturalScore): check inputs, pick the
frames of each video by the metric's `FrameRule`, stream them from a background decoder into `_score_video`, wrap
each number in a `MetricValue` with provenance. The math lives in the subclasses and their pure functions.

Every value's extras hold `frames` = the sampling actually used (`rule`, `count`, `frame_count` T, `indices`); the
rule and count are also in the provenance params (`frame_rule`, `frames`), and the whole sampling in the value's own
provenance params (`video_frames`, as for the image metrics applied per frame: `video_frames.video_provenance`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from typing import Any

from ...imaging import FrameRule, VideoFrame, iter_frames
from ...models.loaded_models import ModelRegistry
from ...settings import Settings
from ..base import MetricSpec, check_params, nan_value
from ..provenance import make_provenance
from ..sample import MetricValue
from .frames import value_provenance
from .sample import VideoNeeds, VideoSample, check_video_inputs

Computed = tuple[float, "str | None", dict[str, Any]]
"""(value, reason when NaN, extras) of one video."""

PREFETCH_FRAMES = 8
"""Frames decoded ahead of the scorer (bounded memory: 8 RGB frames)."""


class VideoScorer(ABC):
    """Base of the video scorers. Subclasses set `FRAME_RULE`, `NEEDS`, `PARAMS` (name -> default) and implement
    `_score_video(sample, frames) -> Computed` and `_provenance_fields() -> dict` (model id, revision, device,
    dtype and anything else that identifies the computation)."""

    FRAME_RULE: FrameRule
    NEEDS: VideoNeeds = VideoNeeds()
    PARAMS: dict[str, Any] = {}

    def __init__(
        self, spec: MetricSpec, settings: Settings, models: ModelRegistry | None = None, **params: Any
    ) -> None:
        check_params(spec.name, params, list(self.PARAMS))
        self.spec = spec
        self.settings = settings
        self.models = models if models is not None else ModelRegistry()
        self.params = {**self.PARAMS, **self._validate(params)}

    @property
    def needs(self) -> VideoNeeds:
        return self.NEEDS

    def provenance(self) -> dict[str, Any]:
        fields = self._provenance_fields()
        return make_provenance(
            params={**self.params, "frame_rule": self.FRAME_RULE.kind, "frames": self.FRAME_RULE.count}, **fields
        )

    def score(self, samples: Sequence[VideoSample], *, missing: str = "raise") -> list[MetricValue]:
        """One `MetricValue` per video sample, in order. `missing="raise"`: a sample lacking a needed input raises
        `InputError` before any model runs; `"nan"`: it gets NaN with the reason."""
        samples = list(samples)
        ok, reasons = check_video_inputs(self.spec.name, self.needs, samples, missing)
        if not samples:
            return []
        provenance = self.provenance()
        values = [
            nan_value(
                self.spec.name,
                reasons.get(i, ""),
                value_provenance(self, self.settings, provenance, sample.video.frame_count),
            )
            for i, sample in enumerate(samples)
        ]
        for i in ok:
            sample = samples[i]
            sampling = self.FRAME_RULE.describe(sample.video.frame_count)
            frames = iter_frames(sample.video, sampling["indices"], prefetch=PREFETCH_FRAMES)
            try:
                value, reason, extras = self._score_video(sample, frames)
            finally:
                frames.close()
            values[i] = MetricValue(
                metric=self.spec.name,
                value=float(value),
                reason=reason,
                extras={**extras, "frames": sampling},
                provenance=value_provenance(self, self.settings, provenance, sample.video.frame_count),
            )
        return values

    def _validate(self, params: dict[str, Any]) -> dict[str, Any]:
        return params

    @abstractmethod
    def _provenance_fields(self) -> dict[str, Any]:
        """`model_id`, `revision`, `device`, `dtype` (+ more params) for `make_provenance`."""

    @abstractmethod
    def _score_video(self, sample: VideoSample, frames: Iterator[VideoFrame]) -> Computed:
        """(value, reason, extras) of one video whose needed inputs are present; `frames` arrive as decoded."""
