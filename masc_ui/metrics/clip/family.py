"""CLIP-I, CLIP-T and CLIPScore (METRICS.md "CLIP family") on one shared CLIP backbone.

Default backbone `openai/clip-vit-base-patch32` (the DreamBooth/DreamBench++ convention; set `clip_model`
for `openai/clip-vit-large-patch14`). All cosines are float32 on L2-normalized projected embeddings; the
backbone caches embeddings by image content, so the four CLIP metrics share one forward per image.
"""

from __future__ import annotations

import numpy as np

from ...models.profiles import ModelIds
from ..backbone_scorer import BackboneScorer, Computed, Pair, ReferenceScorer
from ..sample import Sample
from ..similarity import CLIPSCORE_WEIGHT, clipscore, reference_cosines
from .backbone import ClipBackbone, shared_clip_backbone


class ClipScorer(BackboneScorer):
    """Base of the scorers that read the `clip_model` backbone."""

    MODEL_FIELDS = ("clip",)

    def _load_backbone(self, ids: ModelIds) -> ClipBackbone:
        return shared_clip_backbone(self.models, self.settings, ids.clip, ids.clip, what="CLIP backbone (clip_model)")


class ClipImageScorer(ClipScorer, ReferenceScorer):
    """CLIP-I = mean over references r of cos(image_emb(out), image_emb(r)); `extras["per_ref"]` lists them."""

    def _score_pairs(self, pairs: list[Pair], backbone: ClipBackbone) -> list[Computed]:
        return [
            (mean, None, {"per_ref": per_ref}) for mean, per_ref in reference_cosines(backbone.image_embeddings, pairs)
        ]


def text_image_cosines(samples: list[Sample], backbone: ClipBackbone) -> np.ndarray:
    """(N,) float32 cos(text_emb(full prompt), image_emb(out)); prompts truncated to the text length (77)."""
    texts = backbone.text_embeddings([s.prompt or "" for s in samples])
    images = backbone.image_embeddings([s.out_image for s in samples])
    cosines: np.ndarray = np.einsum("nd,nd->n", texts, images).astype(np.float32)
    return cosines


class ClipTextScorer(ClipScorer):
    """CLIP-T = cos(text_emb(full prompt, no stripping, 77-token truncation), image_emb(out))."""

    def _compute(self, samples: list[Sample], backbone: ClipBackbone) -> list[Computed]:
        return [(float(c), None, {}) for c in text_image_cosines(samples, backbone)]


class ClipScoreScorer(ClipScorer):
    """CLIPScore (Hessel et al. 2021) = 2.5 * max(cos, 0) with CLIP-T's cosine; `extras["cos"]` keeps it.

    The text is the prompt itself, as for CLIP-T (METRICS.md: same embeddings); Hessel et al.'s "A photo depicts"
    caption prefix is not added."""

    def _compute(self, samples: list[Sample], backbone: ClipBackbone) -> list[Computed]:
        return [
            (clipscore(c), None, {"cos": float(c), "weight": CLIPSCORE_WEIGHT})
            for c in text_image_cosines(samples, backbone)
        ]
