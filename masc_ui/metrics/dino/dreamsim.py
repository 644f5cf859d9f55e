"""DreamSim (Fu et al., NeurIPS 2023) = 1 - cos of the DreamSim ensemble embeddings of the output and each reference;
several references: the mean of the per-reference distances (`extras["per_ref"]` lists them). A distance: 0 for the
same image, lower = more similar; range [0, 2] (clipped to it against float rounding). DreamSim-Seg = DreamSim by the
-Seg rule (`masc_ui.metrics.segmented_subject`).

The embedding is the package `dreamsim` 0.2.1's `dreamsim(pretrained=True)` "ensemble" model with its default
`normalize_embeds=True` (see `masc_ui.models.nets.dreamsim`): each image converted to RGB, resized to 224x224 with
PIL's bicubic filter (aspect squashed), scaled to [0, 1]; DINO ViT-B/16 CLS + CLIP ViT-B/16 + OpenCLIP ViT-B/16
projected embeddings with the release's LoRA, concatenated, centred and L2-normalized. Embeddings are cached by image
content, so a reference shared by several outputs is encoded once.

Weights (`dreamsim_weights`): the folder of the extracted release zip holding the DINO backbone as
`checkpoints/dino_vitbase16_pretrain.pth`, or the release zip's URL: it is downloaded and extracted into
`<cache_dir>/dreamsim/` once, and the DINO backbone downloaded next to it, as the package does on first use.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from PIL import Image
from torchvision import transforms

from ...imaging import InputImage, as_input_image
from ...models.loading import is_local, pick_device, pick_dtype
from ...models.nets.dreamsim import (
    DINO_BACKBONE_FILE,
    DINO_BACKBONE_URL,
    ENSEMBLE,
    IMAGE_SIZE,
    LORA_DIR,
    load_dreamsim_ensemble,
)
from ...models.profiles import ModelIds
from ...models.weight_files import resolve_weights_file, resolve_weights_folder
from ...settings import Settings
from ..backbone_scorer import Computed, Pair, ReferenceScorer
from ..embedding_cache import EmbeddingCache
from ..segmented_subject import SegmentedSubjectScorer
from ..similarity import reference_cosines

BATCH_SIZE = 32
CACHE_SIZE = 4096
WHAT = "DreamSim weights (dreamsim_weights)"
PREPROCESS = transforms.Compose(
    [
        transforms.Resize((IMAGE_SIZE, IMAGE_SIZE), interpolation=transforms.InterpolationMode.BICUBIC),
        transforms.ToTensor(),
    ]
)
"""The package's `preprocess`: PIL RGB -> float32 (3, 224, 224) in [0, 1]."""


@dataclass(frozen=True)
class DreamSimInfo:
    model_id: str
    """The weights as the setting names them (folder or URL)."""
    revision: str
    device: str
    dtype: torch.dtype
    folder: str
    """The release folder read."""
    adapter: dict[str, Any] = field(default_factory=dict)
    """The LoRA adapter's settings (`masc_ui.models.lora.merge_lora`)."""


class DreamSimBackbone:
    """The ensemble; `image_embeddings` -> (N, D) float32 unit embeddings, cached by image content.
    `image_forwards` counts the images that went through the ensemble (not the cached ones)."""

    def __init__(
        self, model: Any, info: DreamSimInfo, *, batch_size: int = BATCH_SIZE, cache_size: int = CACHE_SIZE
    ) -> None:
        self.model = model
        self.info = info
        self.batch_size = batch_size
        self.image_cache = EmbeddingCache(cache_size)
        self.image_forwards = 0
        self._count_lock = threading.Lock()

    def image_embeddings(self, images: Sequence[InputImage | Image.Image]) -> np.ndarray:
        """(N, D) float32 unit embeddings of `images` (`InputImage`s, or what `as_input_image` reads); each
        distinct image (by `InputImage.sha256`) is encoded once."""
        inputs = [as_input_image(img) for img in images]
        keys = [img.sha256 for img in inputs]
        return self.image_cache.get_or_compute_many(keys, [img.pixels for img in inputs], self._encode)

    def clear_caches(self) -> None:
        """Forget every cached embedding (benchmarks start each side from empty caches)."""
        self.image_cache.clear()

    @torch.inference_mode()
    def _encode(self, images: list[Any]) -> np.ndarray:
        """(N, D) embeddings of PIL images."""
        chunks = []
        for start in range(0, len(images), self.batch_size):
            batch = images[start : start + self.batch_size]
            pixels = torch.stack([PREPROCESS(img.convert("RGB")) for img in batch])
            chunks.append(self.model(pixels.to(self.info.device)).cpu().numpy())
            with self._count_lock:
                self.image_forwards += len(batch)
        return np.concatenate(chunks)


def dreamsim_folder(ref: str, settings: Settings) -> Path:
    """The release folder of `ref` (a folder, or a zip / its URL extracted into `<cache_dir>/dreamsim/`); for an
    archive, the DINO backbone is downloaded into it when missing."""
    folder = resolve_weights_folder(
        ref, marker=LORA_DIR, what=WHAT, setting="dreamsim_weights", cache_dir=settings.resolved_cache_dir / "dreamsim"
    )
    backbone = folder / DINO_BACKBONE_FILE
    if not backbone.is_file() and not Path(ref).expanduser().is_dir():
        resolve_weights_file(
            DINO_BACKBONE_URL,
            filename=backbone.name,
            what=f"{WHAT}: DINO ViT-B/16 backbone",
            setting="dreamsim_weights",
            cache_dir=backbone.parent,
        )
    return folder


def load_dreamsim_backbone(settings: Settings, ref: str) -> DreamSimBackbone:
    device = pick_device(settings.device)
    dtype = pick_dtype(settings.dtype, device)
    folder = dreamsim_folder(ref, settings)
    model, adapter = load_dreamsim_ensemble(folder, what=WHAT)
    info = DreamSimInfo(
        model_id=ref,
        revision="local" if is_local(ref) else "download",
        device=device,
        dtype=dtype,
        folder=str(folder),
        adapter=adapter,
    )
    return DreamSimBackbone(model.to(device, dtype), info)


class DreamSimScorer(ReferenceScorer):
    """DreamSim = mean over references r of (1 - cos(embed(out), embed(r)))."""

    MODEL_FIELDS = ("dreamsim",)

    def _load_backbone(self, ids: ModelIds) -> DreamSimBackbone:
        key = ("dreamsim", ids.dreamsim, self.settings.device, self.settings.dtype)
        backbone: DreamSimBackbone = self.models.get(key, lambda: load_dreamsim_backbone(self.settings, ids.dreamsim))
        return backbone

    def _score_pairs(self, pairs: list[Pair], backbone: DreamSimBackbone) -> list[Computed]:
        results: list[Computed] = []
        for _, cosines in reference_cosines(backbone.image_embeddings, pairs):
            distances = [min(2.0, max(0.0, 1.0 - c)) for c in cosines]
            results.append((float(np.mean(distances)), None, {"per_ref": distances}))
        return results

    def _extra_provenance(self, info: DreamSimInfo) -> dict[str, Any]:
        return {
            "preprocess": f"RGB, resize ({IMAGE_SIZE}, {IMAGE_SIZE}) bicubic (squashed), [0, 1]; "
            + "; ".join(f"{m.name} mean {list(m.mean)}, std {list(m.std)}" for m in ENSEMBLE),
            "embedding": "concat(dino_vitb16 CLS of the last block, clip_vitb16 and open_clip_vitb16 projected "
            "CLS), minus its mean, L2-normalized (normalize_embeds)",
            "distance": "1 - cos, clipped to [0, 2]",
            "lora": info.adapter,
        }


class DreamSimSegScorer(SegmentedSubjectScorer, DreamSimScorer):
    """DreamSim-Seg; parameters and extras as CLIP-I-Seg's (`fill`, `margin`, `segment_reference`; `per_ref` holds
    distances, `out_box`, `ref_boxes`)."""
