"""The thin stateful shell shared by the embedding metrics: check inputs, get the shared backbone lazily,
compute, wrap each number in a `MetricValue` with provenance. The math lives in the subclasses' `_compute`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any

from ..models.auto_profile import effective_model_ids, ensure_demo_checkpoints
from ..models.loaded_models import ModelRegistry
from ..models.profiles import ModelIds
from ..settings import Settings
from .base import MetricSpec, Needs, check_inputs, check_params, nan_value
from .provenance import make_provenance
from .sample import MetricValue, Sample

Computed = tuple[float, "str | None", dict[str, Any]]
"""(value, reason when NaN, extras) of one sample."""
Pair = tuple[Any, Sequence[Any]]
"""(output image, its reference images), as a metric of the output against its references compares them."""


class BackboneScorer(ABC):
    """Base of the CLIP-family and DINO scorers. Subclasses set `PARAMS` (name -> default) and implement
    `_load_backbone(ids)` (through `self.models`, so it is loaded once per process) and
    `_compute(samples, backbone) -> list[Computed]`."""

    PARAMS: dict[str, Any] = {}
    MODEL_FIELDS: tuple[str, ...] = ()
    """The `ModelIds` fields of its checkpoints (written on first use in the demo profile when missing)."""

    def __init__(
        self, spec: MetricSpec, settings: Settings, models: ModelRegistry | None = None, **params: Any
    ) -> None:
        check_params(spec.name, params, list(self.PARAMS))
        self.spec = spec
        self.settings = settings
        self.models = models if models is not None else ModelRegistry()
        self.params = {**self.PARAMS, **self._validate(params)}

    @property
    def needs(self) -> Needs:
        return self.spec.needs

    def backbone(self) -> Any:
        """The loaded backbone (loaded on first call, shared through `self.models`)."""
        ensure_demo_checkpoints(self.settings, self.MODEL_FIELDS, self.models)
        return self._load_backbone(effective_model_ids(self.settings, self.models))

    def provenance(self) -> dict[str, Any]:
        info = self.backbone().info
        return make_provenance(
            model_id=info.model_id,
            revision=info.revision,
            params=self.params,
            device=info.device,
            dtype=info.dtype,
            **self._extra_provenance(info),
        )

    def score(self, samples: Sequence[Sample], *, missing: str = "raise") -> list[MetricValue]:
        """One `MetricValue` per sample, in order; see `masc_ui.metrics.base.Scorer.score` for `missing`."""
        samples = list(samples)
        check = check_inputs(self.spec.name, self.needs, samples, missing)
        if not samples:
            return []
        backbone = self.backbone()
        provenance = self.provenance()
        computed = self._compute([samples[i] for i in check.ok], backbone) if check.ok else []
        values: list[MetricValue] = [
            nan_value(self.spec.name, check.reasons.get(i, ""), provenance) for i in range(len(samples))
        ]
        for i, (value, reason, extras) in zip(check.ok, computed):
            values[i] = MetricValue(
                metric=self.spec.name, value=float(value), reason=reason, extras=extras, provenance=provenance
            )
        return values

    def _validate(self, params: dict[str, Any]) -> dict[str, Any]:
        return params

    def _extra_provenance(self, info: Any) -> dict[str, Any]:
        return {}

    @abstractmethod
    def _load_backbone(self, ids: ModelIds) -> Any:
        """The backbone for `ids`, through `self.models`."""

    @abstractmethod
    def _compute(self, samples: list[Sample], backbone: Any) -> list[Computed]:
        """One (value, reason, extras) per sample; every sample has the inputs `self.needs` names."""


class ReferenceScorer(BackboneScorer):
    """Base of the metrics of an output against its references (CLIP-I, DINO-I, DINOv2-I, DreamSim): subclasses
    implement `_score_pairs`; `_compute` applies it to each sample's (output, references). The -Seg variants
    (`masc_ui.metrics.segmented_subject`) apply it to the segmented images instead."""

    @abstractmethod
    def _score_pairs(self, pairs: list[Pair], backbone: Any) -> list[Computed]:
        """One (value, reason, extras) per (output, references) pair."""

    def _compute(self, samples: list[Sample], backbone: Any) -> list[Computed]:
        return self._score_pairs([(s.out_image, s.refs) for s in samples], backbone)
