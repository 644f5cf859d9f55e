"""ArtScore (Chen et al., IEEE TMM 2024, `jchen175/ArtScore`): how much the output looks like authentic artwork
rather than a photograph, as a raw regression output. Higher = more art-like; the scale comes from a listwise
ranking loss (listMLE), so only relative values (rankings of images) mean something.

Model: torchvision ResNet-50 whose `fc` is Linear(2048, 1000) - ReLU - Dropout(0.5) - Linear(1000, 1); the
released checkpoint is a plain state dict of that module (keys `conv1.weight`, `bn1.*`, `layer1.0.conv1.weight`,
..., `layer4.2.bn3.*`, `fc.0.{weight,bias}`, `fc.3.{weight,bias}`), loaded with every key checked.
Preprocessing (its `InferenceDataset`): RGB, resized to 224x224 (bilinear, aspect squashed), ImageNet mean/std.
The loader reads the block counts and the stem width from the file: (64, [3, 4, 6, 3]) is torchvision's
`resnet50()`; other values build the same Bottleneck ResNet narrower (the tiny demo checkpoint).
Scores are cached by image content; images go through the network in batches of `BATCH_SIZE`.
Precision: the ResNet body runs in the precision policy's dtype (pixels cast to it); the regression head `fc`
(2048-1000-1, 2 M parameters) always runs in float32, so the score is not a bfloat16 number (bfloat16 would round it
to 3 significant digits and tie close images; provenance params `float32_parts` in bfloat16/float16).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn
from torchvision import transforms

from ...caching import LruCache
from ...errors import InputError
from ...imaging import InputImage
from ...models.conv_layout import conv_input, in_conv_layout
from ...models.loading import pick_device, pick_dtype
from ...models.nets.artscore import RELEASED_FILE, load_artscore_network
from ...models.precision import cast_model, float32_parts, precision_params
from ...models.profiles import ModelIds
from ...models.weight_files import resolve_weights_file
from ...settings import Settings
from ..backbone_scorer import BackboneScorer, Computed
from ..input_images import input_images
from ..sample import Sample

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
SIZE = 224
BATCH_SIZE = 32
CACHE_SIZE = 4096

ART_TRANSFORM = transforms.Compose(
    [
        transforms.Resize((SIZE, SIZE), interpolation=transforms.InterpolationMode.BILINEAR),
        transforms.ToTensor(),
        transforms.Normalize(IMAGENET_MEAN, IMAGENET_STD),
    ]
)


@dataclass(frozen=True)
class ArtScoreInfo:
    model_id: str
    revision: str
    device: str
    dtype: torch.dtype
    architecture: str
    float32_parts: tuple[str, ...] = ()
    """Parts kept in float32 whatever `dtype` is (the head `fc`)."""


class ArtScoreBackbone:
    """The network and its per-image score cache; `forwards` counts images through it."""

    def __init__(
        self, model: nn.Module, info: ArtScoreInfo, *, batch_size: int = BATCH_SIZE, cache_size: int = CACHE_SIZE
    ) -> None:
        self.model = model
        self.info = info
        self.batch_size = batch_size
        self.cache: LruCache[float] = LruCache(cache_size)
        self.forwards = 0
        self._count_lock = threading.Lock()

    def scores(self, images: Sequence[InputImage]) -> list[float]:
        found: dict[str, float] = {}
        todo: dict[str, InputImage] = {}
        for img in images:
            if img.sha256 in found or img.sha256 in todo:
                continue
            cached = self.cache.get(img.sha256)
            if cached is None:
                todo[img.sha256] = img
            else:
                found[img.sha256] = cached
        if todo:
            for sha, value in zip(todo, self._forward(list(todo.values()))):
                self.cache.put(sha, float(value))
                found[sha] = float(value)
        return [found[img.sha256] for img in images]

    @torch.inference_mode()
    def _forward(self, images: list[InputImage]) -> np.ndarray:
        out = []
        for start in range(0, len(images), self.batch_size):
            batch = torch.stack(
                [ART_TRANSFORM(img.pixels.convert("RGB")) for img in images[start : start + self.batch_size]]
            )
            scores = self.model(conv_input(batch, self.info.device, self.info.dtype)).float()
            out.append(scores.reshape(-1).cpu().numpy())
            with self._count_lock:
                self.forwards += len(batch)
        return np.concatenate(out)


def load_artscore_backbone(settings: Settings, ids: ModelIds) -> ArtScoreBackbone:
    if not ids.artscore:
        raise InputError("ArtScore needs its checkpoint: set MASC_ARTSCORE_CHECKPOINT")
    device = pick_device(settings.device)
    dtype = pick_dtype(settings.dtype, device)
    path = resolve_weights_file(
        ids.artscore,
        filename=RELEASED_FILE,
        what="ArtScore checkpoint",
        setting="artscore_checkpoint",
        cache_dir=settings.resolved_cache_dir,
    )
    net, label = load_artscore_network(path)
    net = in_conv_layout(cast_model(net, device, dtype, float32_parts=("fc",)), device)
    info = ArtScoreInfo(
        model_id=str(path),
        revision="local",
        device=device,
        dtype=dtype,
        architecture=label,
        float32_parts=tuple(float32_parts(net)),
    )
    return ArtScoreBackbone(net, info)


class ArtScoreScorer(BackboneScorer):
    """ArtScore of each sample's output (`extras` is empty: the value is the whole story)."""

    MODEL_FIELDS = ("artscore",)

    def _load_backbone(self, ids: ModelIds) -> ArtScoreBackbone:
        key = ("artscore", ids.artscore, self.settings.device, self.settings.dtype)
        return self.models.get(key, lambda: load_artscore_backbone(self.settings, ids))

    def _compute(self, samples: list[Sample], backbone: ArtScoreBackbone) -> list[Computed]:
        values = backbone.scores(input_images([s.out for s in samples], ["output"] * len(samples)))
        return [(v, None, {}) for v in values]

    def _extra_provenance(self, info: ArtScoreInfo) -> dict[str, Any]:
        return {
            "architecture": info.architecture,
            "preprocess": f"RGB, resize ({SIZE}, {SIZE}) bilinear (squashed), ImageNet mean/std",
            "convention": "raw regression output; only relative values (rankings) mean something",
            **precision_params(info.dtype, list(info.float32_parts)),
        }
