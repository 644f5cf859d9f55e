"""The scorer shell of the metrics computed on (output image, prompt) pairs by a `PairEngine` (VQAScore, ITMScore):
inputs checked by `BackboneScorer`, the engine loaded once per process through the model registry, its per-pair
values and extras wrapped with the provenance (the engine's `info.params` go into the provenance's params)."""

from __future__ import annotations

from typing import Any

from ..backbone_scorer import BackboneScorer, Computed
from ..sample import Sample
from .pair_engine import EngineInfo, PairEngine


class PairScorer(BackboneScorer):
    """Scores each sample's output image against its full prompt; subclasses implement `_load_backbone`."""

    def _compute(self, samples: list[Sample], backbone: PairEngine) -> list[Computed]:
        images = [s.out_image for s in samples]
        scores = backbone.score(images, [s.prompt or "" for s in samples])
        computed = []
        for image, score in zip(images, scores):
            extras = dict(score.extras)
            if image.notes:
                extras["image_notes"] = list(image.notes)
            computed.append((score.value, score.reason, extras))
        return computed

    def _extra_provenance(self, info: EngineInfo) -> dict[str, Any]:
        return dict(info.params)
