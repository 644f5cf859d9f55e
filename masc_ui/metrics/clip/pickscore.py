"""PickScore (Kirstain et al. 2023, "Pick-a-Pic") = logit_scale.exp() * cos(text_emb, image_emb).

Model `yuvalkirstain/PickScore_v1` (a CLIP-H/14 fine-tune) with the processor of
`laion/CLIP-ViT-H-14-laion2B-s32B-b79K`, as the authors' inference code does; the raw scale is kept
(published values are about 18-23), so PickScore is not comparable across checkpoints with another scale.
"""

from __future__ import annotations

from typing import Any

from ...models.profiles import ModelIds
from ..backbone_scorer import BackboneScorer, Computed
from ..sample import Sample
from ..similarity import pickscore
from .backbone import BackboneInfo, ClipBackbone, shared_clip_backbone
from .family import text_image_cosines


class PickScoreScorer(BackboneScorer):
    """PickScore of the full prompt and the output; `extras` holds the cosine and the scale."""

    MODEL_FIELDS = ("pickscore", "pickscore_processor")

    def _load_backbone(self, ids: ModelIds) -> ClipBackbone:
        return shared_clip_backbone(
            self.models, self.settings, ids.pickscore, ids.pickscore_processor, what="PickScore model (pickscore_model)"
        )

    def _compute(self, samples: list[Sample], backbone: ClipBackbone) -> list[Computed]:
        scale = backbone.logit_scale
        return [
            (pickscore(c, scale), None, {"cos": float(c), "logit_scale": scale})
            for c in text_image_cosines(samples, backbone)
        ]

    def _extra_provenance(self, info: BackboneInfo) -> dict[str, Any]:
        return {"processor_id": info.processor_id}
