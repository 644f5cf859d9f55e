"""A loaded CLIP-architecture model (CLIP, PickScore) with its processor and its embedding caches.

Embeddings are the projected ones: with transformers 5, `get_image_features` / `get_text_features` return a
ModelOutput whose `pooler_output` is the projected embedding (older versions returned the tensor itself; both
are accepted). They are L2-normalized in float32 whatever the model's dtype.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from PIL import Image

from ...imaging import InputImage, as_input_image
from ...models.loaded_models import ModelRegistry
from ...models.loading import load_pretrained, pick_device, pick_dtype
from ...settings import Settings
from ..embedding_cache import EmbeddingCache
from ..provenance import checkpoint_revision

BATCH_SIZE = 32
CACHE_SIZE = 4096


@dataclass(frozen=True)
class BackboneInfo:
    """What a metric value records about the backbone it came from."""

    model_id: str
    processor_id: str
    revision: str
    device: str
    dtype: torch.dtype


class ClipBackbone:
    """CLIP model + processor; image and text embeddings (N, D) float32, L2-normalized, cached by content.

    `image_forwards` / `text_forwards` count the images / texts that went through the towers (not the cached
    ones), for tests and benchmarks.
    """

    def __init__(
        self,
        model: Any,
        processor: Any,
        info: BackboneInfo,
        *,
        batch_size: int = BATCH_SIZE,
        cache_size: int = CACHE_SIZE,
        logit_scale: float | None = None,
    ) -> None:
        self.model = model
        self.processor = processor
        self.info = info
        self._logit_scale = logit_scale
        self.batch_size = batch_size
        self.image_cache = EmbeddingCache(cache_size)
        self.text_cache = EmbeddingCache(cache_size)
        self.image_forwards = 0
        self.text_forwards = 0
        self._count_lock = threading.Lock()

    @property
    def text_length(self) -> int:
        """The text tower's trained length (77 for CLIP); prompts are truncated to it."""
        return int(self.model.config.text_config.max_position_embeddings)

    @property
    def logit_scale(self) -> float:
        """`logit_scale.exp()`, the model's learned temperature (100 for PickScore_v1), from the float32 weights
        (given at construction) even when the model runs in bfloat16, whose 8-bit mantissa would turn 100 into
        98.9."""
        if self._logit_scale is not None:
            return self._logit_scale
        return float(self.model.logit_scale.detach().float().exp().item())

    def image_embeddings(self, images: Sequence[InputImage | Image.Image]) -> np.ndarray:
        """(N, D) float32 unit vectors of `images` (`InputImage`s, or what `as_input_image` reads); each distinct
        image (by `InputImage.sha256`) is encoded once per backbone."""
        inputs = [as_input_image(img) for img in images]
        keys = [img.sha256 for img in inputs]
        return self.image_cache.get_or_compute_many(keys, [img.pixels for img in inputs], self._encode_images)

    def text_embeddings(self, texts: Sequence[str]) -> np.ndarray:
        """(N, D) float32 unit vectors of `texts`, truncated to `text_length` tokens."""
        return self.text_cache.get_or_compute_many(list(texts), list(texts), self._encode_texts)

    @torch.inference_mode()
    def _encode_images(self, images: list[Image.Image]) -> np.ndarray:
        chunks = []
        for start in range(0, len(images), self.batch_size):
            batch = images[start : start + self.batch_size]
            pixels = self.processor(images=batch, return_tensors="pt")["pixel_values"]
            out = self.model.get_image_features(pixel_values=pixels.to(self.info.device, self.info.dtype))
            chunks.append(_unit(_projected(out)))
            with self._count_lock:
                self.image_forwards += len(batch)
        return np.concatenate(chunks)

    @torch.inference_mode()
    def _encode_texts(self, texts: list[str]) -> np.ndarray:
        chunks = []
        for start in range(0, len(texts), self.batch_size):
            batch = texts[start : start + self.batch_size]
            tokens = self.processor.tokenizer(
                batch, padding=True, truncation=True, max_length=self.text_length, return_tensors="pt"
            )
            out = self.model.get_text_features(
                input_ids=tokens["input_ids"].to(self.info.device),
                attention_mask=tokens["attention_mask"].to(self.info.device),
            )
            chunks.append(_unit(_projected(out)))
            with self._count_lock:
                self.text_forwards += len(batch)
        return np.concatenate(chunks)


def load_clip_backbone(model_id: str, processor_id: str, settings: Settings, *, what: str) -> ClipBackbone:
    """Load a CLIP-architecture checkpoint and its processor on the settings' device, in the dtype of the precision
    policy (`settings.dtype`). The weights are read in float32 and cast, so that the learned temperature is kept
    in float32."""
    from transformers import AutoModel, AutoProcessor

    device = pick_device(settings.device)
    dtype = pick_dtype(settings.dtype, device)
    model = load_pretrained(AutoModel, model_id, what=what, dtype=torch.float32)
    logit_scale = float(model.logit_scale.detach().exp().item()) if hasattr(model, "logit_scale") else None
    processor = load_pretrained(AutoProcessor, processor_id, what=f"{what} processor")
    model = model.to(device=device, dtype=dtype).eval()
    info = BackboneInfo(
        model_id=model_id, processor_id=processor_id, revision=checkpoint_revision(model_id), device=device, dtype=dtype
    )
    return ClipBackbone(model, processor, info, logit_scale=logit_scale)


def shared_clip_backbone(
    models: ModelRegistry, settings: Settings, model_id: str, processor_id: str, *, what: str
) -> ClipBackbone:
    """The process-wide backbone for (model, processor, device, dtype), loaded on first use."""
    key = ("clip-backbone", model_id, processor_id, settings.device, settings.dtype)
    return models.get(key, lambda: load_clip_backbone(model_id, processor_id, settings, what=what))


def _projected(out: Any) -> torch.Tensor:
    projected: torch.Tensor = out.pooler_output if hasattr(out, "pooler_output") else out
    return projected


def _unit(emb: torch.Tensor) -> np.ndarray:
    emb = emb.float()
    unit: torch.Tensor = emb / emb.norm(dim=-1, keepdim=True)
    return unit.cpu().numpy()
