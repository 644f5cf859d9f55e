"""Aesthetic score: the LAION aesthetic predictor v2 (christophschuhmann/improved-aesthetic-predictor,
`sac+logos+ava1-l14-linearMSE.pth`) of the output, as OpenS2V-Nexus's `eval/get_aesscore.py` computes it.

Recipe (`get_aesscore.py`'s `AestheticScorer`): the image through the `CLIPProcessor` of `openai/clip-vit-large-patch14`
(resize 224 on the short side, bicubic, centre crop 224, CLIP mean/std); `CLIPVisionModelWithProjection`'s
`image_embeds` (768-d; the same vector as `CLIPModel.get_image_features`, which is what runs here), L2-normalised; the
MLP head (`masc_ui.models.nets.aesthetic`) on it. The head was trained on 1-10 ratings (SAC, LOGOS, AVA); real photos
score about 4-7; it is a linear map, so values outside 1-10 are possible. Higher = more aesthetic.

A video output: the generic frame rule (`masc_ui.metrics.video.frames`): `video_frames` frames (32 by default)
sampled with numpy.linspace (first and last included, `dtype=int`), each scored, their mean: OpenS2V's rule
(`sample_video_frames(num_frames=32)`, `aes_scores.mean()`) when `video_frames` is 32.

The CLIP is the shared CLIP backbone of `masc_ui.metrics.clip.backbone` (one model and one image-embedding cache per
checkpoint: with `clip_model` set to the same checkpoint, CLIP-I and the aesthetic score share one forward per
image). Precision: the CLIP towers in the precision policy's dtype (OpenS2V: float32); the embedding normalised and
the head run in float32.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ...errors import InputError, ModelUnavailableError
from ...imaging import InputImage
from ...models.loaded_models import ModelRegistry
from ...models.nets.aesthetic import RELEASED_FILE, AestheticHead, load_aesthetic_head
from ...models.precision import precision_params
from ...models.profiles import ModelIds
from ...models.weight_files import resolve_weights_file
from ...settings import Settings
from ..backbone_scorer import BackboneScorer, Computed
from ..clip.backbone import ClipBackbone, shared_clip_backbone
from ..input_images import input_images
from ..sample import Sample


@dataclass(frozen=True)
class AestheticInfo:
    model_id: str
    """The head's weights file."""
    revision: str
    device: str
    dtype: torch.dtype
    """The CLIP's dtype (the head runs in float32)."""
    clip_model: str
    clip_revision: str


class AestheticBackbone:
    """The shared CLIP backbone and the aesthetic head (float32, on the CLIP's device)."""

    def __init__(self, clip: ClipBackbone, head: AestheticHead, info: AestheticInfo) -> None:
        self.clip = clip
        self.head = head
        self.info = info

    @property
    def batch_size(self) -> int:
        """The CLIP backbone's image batch size."""
        return self.clip.batch_size

    @batch_size.setter
    def batch_size(self, value: int) -> None:
        self.clip.batch_size = value

    def clear_caches(self) -> None:
        self.clip.image_cache.clear()

    @torch.inference_mode()
    def scores(self, images: Sequence[InputImage]) -> np.ndarray:
        """(N,) float64 aesthetic scores of `images`; each distinct image through the CLIP once (its cache)."""
        embeds = torch.from_numpy(self.clip.image_embeddings(images)).to(self.info.device)
        scores: np.ndarray = self.head(embeds.float()).cpu().numpy().astype(np.float64)
        return scores


def load_aesthetic_backbone(settings: Settings, models: ModelRegistry, ids: ModelIds) -> AestheticBackbone:
    if not ids.aesthetic_head:
        raise InputError("the aesthetic score needs its head: set MASC_AESTHETIC_HEAD")
    if not ids.aesthetic_clip:
        raise InputError("the aesthetic score needs its CLIP: set MASC_AESTHETIC_CLIP_MODEL")
    clip = shared_clip_backbone(
        models, settings, ids.aesthetic_clip, ids.aesthetic_clip, what="aesthetic CLIP (aesthetic_clip_model)"
    )
    path = resolve_weights_file(
        ids.aesthetic_head,
        filename=RELEASED_FILE,
        what="aesthetic predictor head",
        setting="aesthetic_head",
        cache_dir=settings.resolved_cache_dir,
    )
    head = load_aesthetic_head(path, what=f"aesthetic predictor head {path} (MASC_AESTHETIC_HEAD)")
    width = int(clip.model.config.projection_dim)
    if head.width != width:
        raise ModelUnavailableError(
            f"aesthetic predictor head {path} reads {head.width}-d CLIP embeddings, but the CLIP {ids.aesthetic_clip} "
            f"gives {width}-d ones: the released head needs openai/clip-vit-large-patch14 (768-d; "
            "MASC_AESTHETIC_CLIP_MODEL)"
        )
    info = AestheticInfo(
        model_id=str(path),
        revision="local",
        device=clip.info.device,
        dtype=clip.info.dtype,
        clip_model=clip.info.model_id,
        clip_revision=clip.info.revision,
    )
    return AestheticBackbone(clip, head.to(clip.info.device), info)


class AestheticScorer(BackboneScorer):
    """The aesthetic score of each sample's output (`extras` is empty: the value is the whole story)."""

    MODEL_FIELDS = ("aesthetic_head", "aesthetic_clip")

    def _load_backbone(self, ids: ModelIds) -> AestheticBackbone:
        key = ("aesthetic", ids.aesthetic_head, ids.aesthetic_clip, self.settings.device, self.settings.dtype)
        backbone: AestheticBackbone = self.models.get(
            key, lambda: load_aesthetic_backbone(self.settings, self.models, ids)
        )
        return backbone

    def _compute(self, samples: list[Sample], backbone: AestheticBackbone) -> list[Computed]:
        values = backbone.scores(input_images([s.out for s in samples], ["output"] * len(samples)))
        return [(float(v), None, {}) for v in values]

    def _extra_provenance(self, info: AestheticInfo) -> dict[str, Any]:
        return {
            "clip_model": info.clip_model,
            "clip_revision": info.clip_revision,
            "embedding": "CLIP image embedding (get_image_features), L2-normalised in float32",
            **precision_params(info.dtype, ["head"]),
        }
