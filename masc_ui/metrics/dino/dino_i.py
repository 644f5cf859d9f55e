"""DINO-I (the DreamBooth convention) = cos of the CLS token of `facebook/dino-vits16` between the output and
each reference; several references: their mean (`extras["per_ref"]` lists them). DINO-I-Seg = DINO-I by the -Seg
rule (`masc_ui.metrics.segmented_subject`).

Preprocessing is METRICS.md's (DreamBooth's torchvision pipeline): resize the shorter side to 256 with
bicubic filtering, centre crop 224, scale to [0, 1], normalize with the checkpoint processor's mean/std
(ImageNet's for dino-vits16). The checkpoint's own processor geometry (a 224x224 bilinear squash for
dino-vits16) is not used. CLS = `last_hidden_state[:, 0]` (after the final LayerNorm).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from PIL import Image
from torchvision import transforms

from ...imaging import InputImage, as_input_image
from ...models.loaded_models import ModelRegistry
from ...models.loading import load_pretrained, pick_device, pick_dtype
from ...models.profiles import ModelIds
from ...settings import Settings
from ..backbone_scorer import Computed, Pair, ReferenceScorer
from ..clip.backbone import BATCH_SIZE, CACHE_SIZE
from ..embedding_cache import EmbeddingCache
from ..provenance import checkpoint_revision
from ..segmented_subject import SegmentedSubjectScorer
from ..similarity import reference_cosines

RESIZE = 256
CROP = 224


@dataclass(frozen=True)
class DinoInfo:
    model_id: str
    revision: str
    device: str
    dtype: torch.dtype
    mean: tuple[float, ...]
    """Per channel (R, G, B), from the checkpoint's processor."""
    std: tuple[float, ...]
    preprocess: str = ""
    """How pixels are prepared, in words (recorded in provenance params)."""


def dino_transform(mean: Sequence[float], std: Sequence[float]) -> transforms.Compose:
    """PIL RGB -> float32 (3, 224, 224): resize shorter side 256 bicubic, centre crop 224, normalize."""
    return transforms.Compose(
        [
            transforms.Resize(RESIZE, interpolation=transforms.InterpolationMode.BICUBIC),
            transforms.CenterCrop(CROP),
            transforms.ToTensor(),
            transforms.Normalize(list(mean), list(std)),
        ]
    )


Preprocess = Callable[[list[Image.Image]], torch.Tensor]
"""RGB PIL images -> float32 pixel values (N, 3, H, W) for the model."""


def stacked(transform: Callable[[Image.Image], torch.Tensor]) -> Preprocess:
    """The batch `Preprocess` of a one-image transform: its outputs stacked."""
    return lambda images: torch.stack([transform(img) for img in images])


class DinoBackbone:
    """A DINO-style ViT; `image_embeddings` -> (N, D) float32 unit CLS vectors, cached by image content.

    `preprocess` turns a batch of RGB images into pixel values (default: `dino_transform` with the info's mean/std);
    `image_forwards` counts the images that went through the model (not the cached ones)."""

    def __init__(
        self,
        model: Any,
        info: DinoInfo,
        *,
        preprocess: Preprocess | None = None,
        batch_size: int = BATCH_SIZE,
        cache_size: int = CACHE_SIZE,
    ) -> None:
        self.model = model
        self.info = info
        self.preprocess = preprocess or stacked(dino_transform(info.mean, info.std))
        self.batch_size = batch_size
        self.image_cache = EmbeddingCache(cache_size)
        self.image_forwards = 0
        self._count_lock = threading.Lock()

    def image_embeddings(self, images: Sequence[InputImage | Image.Image]) -> np.ndarray:
        """(N, D) float32 unit CLS vectors of `images` (`InputImage`s, or what `as_input_image` reads); each
        distinct image (by `InputImage.sha256`) is encoded once."""
        inputs = [as_input_image(img) for img in images]
        keys = [img.sha256 for img in inputs]
        return self.image_cache.get_or_compute_many(keys, [img.pixels for img in inputs], self._encode)

    def clear_caches(self) -> None:
        """Forget every cached embedding (benchmarks start each side from empty caches)."""
        self.image_cache.clear()

    @torch.inference_mode()
    def _encode(self, images: list[Image.Image]) -> np.ndarray:
        chunks = []
        for start in range(0, len(images), self.batch_size):
            batch = images[start : start + self.batch_size]
            pixels = self.preprocess([img.convert("RGB") for img in batch])
            hidden = self.model(pixel_values=pixels.to(self.info.device, self.info.dtype)).last_hidden_state
            cls = hidden[:, 0].float()
            chunks.append((cls / cls.norm(dim=-1, keepdim=True)).cpu().numpy())
            with self._count_lock:
                self.image_forwards += len(batch)
        return np.concatenate(chunks)


def load_dino_backbone(model_id: str, settings: Settings) -> DinoBackbone:
    from transformers import AutoConfig, AutoImageProcessor, AutoModel

    device = pick_device(settings.device)
    dtype = pick_dtype(settings.dtype, device)
    config = load_pretrained(AutoConfig, model_id, what="DINO backbone config (dino_model)")
    # A ViT's pooling layer is not used (DINO-I reads the CLS token) and DINO checkpoints do not ship one.
    extra = {"add_pooling_layer": False} if config.model_type == "vit" else {}
    model = (
        load_pretrained(AutoModel, model_id, what="DINO backbone (dino_model)", dtype=dtype, **extra).to(device).eval()
    )
    processor = load_pretrained(AutoImageProcessor, model_id, what="DINO image processor (dino_model)")
    mean = tuple(float(v) for v in processor.image_mean)
    std = tuple(float(v) for v in processor.image_std)
    info = DinoInfo(
        model_id=model_id,
        revision=checkpoint_revision(model_id),
        device=device,
        dtype=dtype,
        mean=mean,
        std=std,
        preprocess=f"resize {RESIZE} bicubic, centre crop {CROP}, mean {list(mean)}, std {list(std)}",
    )
    return DinoBackbone(model, info)


def shared_dino_backbone(models: ModelRegistry, settings: Settings, model_id: str) -> DinoBackbone:
    key = ("dino-backbone", model_id, settings.device, settings.dtype)
    return models.get(key, lambda: load_dino_backbone(model_id, settings))


class DinoImageScorer(ReferenceScorer):
    """DINO-I = mean over references r of cos(CLS(out), CLS(r))."""

    MODEL_FIELDS = ("dino",)

    def _load_backbone(self, ids: ModelIds) -> DinoBackbone:
        return shared_dino_backbone(self.models, self.settings, ids.dino)

    def _score_pairs(self, pairs: list[Pair], backbone: DinoBackbone) -> list[Computed]:
        return [
            (mean, None, {"per_ref": per_ref}) for mean, per_ref in reference_cosines(backbone.image_embeddings, pairs)
        ]

    def _extra_provenance(self, info: DinoInfo) -> dict[str, Any]:
        return {"preprocess": info.preprocess}


class DinoSegScorer(SegmentedSubjectScorer, DinoImageScorer):
    """DINO-I-Seg; parameters and extras as CLIP-I-Seg's (`fill`, `margin`, `segment_reference`; `per_ref`,
    `out_box`, `ref_boxes`)."""
