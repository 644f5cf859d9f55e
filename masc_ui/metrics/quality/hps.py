"""HPSv2.1 (Human Preference Score v2, Wu et al. 2023; the v2.1 checkpoint `HPS_v2.1_compressed.pt` of xswu/HPSv2) of
the output and the full prompt: 100 x the cosine of the image and text embeddings of an OpenCLIP ViT-H/14 fine-tuned
on human preference choices, as the HPSv2 benchmark reports it (hpsv2 1.2.0's `evaluation.py`:
`image_features @ text_features.T * 100`; its `score()` returns the cosine itself, the value here / 100). Typical
values: 25-35. Higher = preferred by people for this prompt.

Recipe (hpsv2 1.2.0, `img_score.score` with the `preprocess_val` of `create_model_and_transforms(...,
light_augmentation=True)`): the image in RGB to a [0, 1] tensor; `ResizeMaxSize(224)`: the long side scaled to 224
(`torchvision.transforms.functional.resize` on the tensor, bicubic, antialiased as torchvision >= 0.17 does for
tensors; the sides `round(side * 224 / long side)`), then padded with 0 (black) to 224 x 224, the pad split
left/top = pad // 2; OpenAI CLIP mean/std. One difference: hpsv2 skips the resize AND the pad when the long side is
already 224, so a non-square image of long side 224 does not fit its ViT (an error there); it is padded here. The
prompt: OpenCLIP's tokenizer (77 tokens, truncated). Embeddings: `encode_image` / `encode_text`, L2-normalised in
float32 (hpsv2 normalises in the autocast dtype).
Network and loader: `masc_ui.models.nets.hpsv2` (OpenCLIP's own). Image and text embeddings are cached (by image
sha256, by prompt), so an image or a prompt shared by several samples is encoded once; forwards run in batches of
`BATCH_SIZE`. Precision: the whole model in the precision policy's dtype (hpsv2 runs it under CUDA autocast).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn
from torchvision.transforms import InterpolationMode
from torchvision.transforms import functional as TF

from ...errors import InputError
from ...imaging import InputImage
from ...models.loading import pick_device, pick_dtype
from ...models.nets.hpsv2 import RELEASED_FILE, load_hps_model
from ...models.profiles import ModelIds
from ...models.weight_files import resolve_weights_file
from ...settings import Settings
from ..backbone_scorer import BackboneScorer, Computed
from ..embedding_cache import EmbeddingCache
from ..input_images import input_images
from ..sample import Sample

SIZE = 224
OPENAI_MEAN = (0.48145466, 0.4578275, 0.40821073)
OPENAI_STD = (0.26862954, 0.26130258, 0.27577711)
SCALE = 100.0
"""HPS = SCALE x cosine (the HPSv2 benchmark's unit)."""
BATCH_SIZE = 16
CACHE_SIZE = 4096


def hps_pixels(image: Any) -> torch.Tensor:
    """(3, 224, 224) float32: an RGB PIL image as hpsv2's `preprocess_val` makes it (see the module docstring)."""
    x = TF.to_tensor(image.convert("RGB"))
    height, width = x.shape[1:]
    scale = SIZE / float(max(height, width))
    if scale != 1.0:
        x = TF.resize(x, [round(height * scale), round(width * scale)], InterpolationMode.BICUBIC, antialias=True)
    pad_h, pad_w = SIZE - x.shape[1], SIZE - x.shape[2]
    x = TF.pad(x, [pad_w // 2, pad_h // 2, pad_w - pad_w // 2, pad_h - pad_h // 2], fill=0)
    normalized: torch.Tensor = TF.normalize(x, OPENAI_MEAN, OPENAI_STD)
    return normalized


@dataclass(frozen=True)
class HpsInfo:
    model_id: str
    revision: str
    device: str
    dtype: torch.dtype
    architecture: str


class HpsBackbone:
    """The OpenCLIP model, its tokenizer and the image / text embedding caches; `image_forwards` / `text_forwards`
    count the images / prompts that went through the towers (not the cached ones)."""

    def __init__(
        self,
        model: nn.Module,
        tokenizer: Callable[..., torch.Tensor],
        info: HpsInfo,
        *,
        batch_size: int = BATCH_SIZE,
        cache_size: int = CACHE_SIZE,
    ) -> None:
        self.model: Any = model  # an OpenCLIP CLIP: encode_image / encode_text
        self.tokenizer = tokenizer
        self.info = info
        self.batch_size = batch_size
        self.image_cache = EmbeddingCache(cache_size)
        self.text_cache = EmbeddingCache(cache_size)
        self.image_forwards = 0
        self.text_forwards = 0
        self._count_lock = threading.Lock()

    def clear_caches(self) -> None:
        self.image_cache.clear()
        self.text_cache.clear()

    def image_embeddings(self, images: Sequence[InputImage]) -> np.ndarray:
        """(N, D) float32 unit image embeddings; each distinct image encoded once."""
        return self.image_cache.get_or_compute_many([img.sha256 for img in images], list(images), self._images)

    def text_embeddings(self, prompts: Sequence[str]) -> np.ndarray:
        """(N, D) float32 unit text embeddings; each distinct prompt encoded once."""
        return self.text_cache.get_or_compute_many(list(prompts), list(prompts), self._texts)

    @torch.inference_mode()
    def _images(self, images: list[Any]) -> np.ndarray:
        chunks = []
        for start in range(0, len(images), self.batch_size):
            batch = torch.stack([hps_pixels(img.pixels) for img in images[start : start + self.batch_size]])
            chunks.append(_unit(self.model.encode_image(batch.to(self.info.device, self.info.dtype))))
            with self._count_lock:
                self.image_forwards += len(batch)
        return np.concatenate(chunks)

    @torch.inference_mode()
    def _texts(self, prompts: list[Any]) -> np.ndarray:
        chunks = []
        for start in range(0, len(prompts), self.batch_size):
            batch = prompts[start : start + self.batch_size]
            tokens = self.tokenizer([str(p) for p in batch]).to(self.info.device)
            chunks.append(_unit(self.model.encode_text(tokens)))
            with self._count_lock:
                self.text_forwards += len(batch)
        return np.concatenate(chunks)


def _unit(emb: torch.Tensor) -> np.ndarray:
    emb = emb.float()
    unit: np.ndarray = (emb / emb.norm(dim=-1, keepdim=True)).cpu().numpy()
    return unit


def load_hps_backbone(settings: Settings, ids: ModelIds) -> HpsBackbone:
    if not ids.hps:
        raise InputError("HPSv2.1 needs its checkpoint: set MASC_HPS_MODEL")
    device = pick_device(settings.device)
    dtype = pick_dtype(settings.dtype, device)
    path = resolve_weights_file(
        ids.hps,
        filename=RELEASED_FILE,
        what="HPSv2.1 checkpoint",
        setting="hps_model",
        cache_dir=settings.resolved_cache_dir,
    )
    model, tokenizer, label = load_hps_model(path, what=f"HPSv2.1 checkpoint {path} (MASC_HPS_MODEL)")
    model = model.to(device=device, dtype=dtype)
    info = HpsInfo(model_id=str(path), revision="local", device=device, dtype=dtype, architecture=label)
    return HpsBackbone(model, tokenizer, info)


class HpsScorer(BackboneScorer):
    """HPSv2.1 of each sample's output and full prompt; `extras["cos"]` keeps the cosine (hpsv2's `score()`)."""

    MODEL_FIELDS = ("hps",)

    def _load_backbone(self, ids: ModelIds) -> HpsBackbone:
        key = ("hpsv21", ids.hps, self.settings.device, self.settings.dtype)
        backbone: HpsBackbone = self.models.get(key, lambda: load_hps_backbone(self.settings, ids))
        return backbone

    def _compute(self, samples: list[Sample], backbone: HpsBackbone) -> list[Computed]:
        outs = input_images([s.out for s in samples], ["output"] * len(samples))
        images = backbone.image_embeddings(outs)
        texts = backbone.text_embeddings([s.prompt or "" for s in samples])
        cosines = np.einsum("nd,nd->n", images.astype(np.float64), texts.astype(np.float64))
        return [(SCALE * float(c), None, {"cos": float(c)}) for c in cosines]

    def _extra_provenance(self, info: HpsInfo) -> dict[str, Any]:
        return {
            "architecture": info.architecture,
            "preprocess": "RGB tensor; long side to 224 (bicubic, antialiased), pad 0 to 224x224 centred; OpenAI norm",
            "output": f"{SCALE:g} x cos(unit image, unit text embedding), as the HPSv2 benchmark",
        }
