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

import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch
from torch import nn
from torchvision import models as tv_models
from torchvision import transforms

from ..caching import LruCache
from ..errors import InputError, ModelUnavailableError
from ..imaging import InputImage
from ..models.conv_layout import conv_input, in_conv_layout
from ..models.loading import pick_device, pick_dtype
from ..models.precision import cast_model, float32_parts, precision_params
from ..models.profiles import ModelIds
from ..models.state_dicts import load_strict, read_state_dict
from ..models.weight_files import resolve_weights_file
from ..settings import Settings
from .backbone_scorer import BackboneScorer, Computed
from .input_images import input_images
from .sample import Sample

RELEASED_FILE = "loss@listMLE_model@resnet50_denseLayer@True_batch_size@16_lr@0.0001_dropout@0.5_E_8.pth"
RESNET50_LAYERS = (3, 4, 6, 3)
HEAD_HIDDEN = 1000
DROPOUT = 0.5
IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
SIZE = 224
BATCH_SIZE = 32
CACHE_SIZE = 4096

ART_TRANSFORM = transforms.Compose([
    transforms.Resize((SIZE, SIZE), interpolation=transforms.InterpolationMode.BILINEAR),
    transforms.ToTensor(),
    transforms.Normalize(IMAGENET_MEAN, IMAGENET_STD),
])


def artscore_head(features: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(features, HEAD_HIDDEN), nn.ReLU(), nn.Dropout(DROPOUT), nn.Linear(HEAD_HIDDEN, 1))


class _NarrowResNet(tv_models.ResNet):
    """torchvision's Bottleneck ResNet with a stem of `width` channels (64 in ResNet-50) — same module names."""

    def __init__(self, width: int, layers: Sequence[int]) -> None:
        nn.Module.__init__(self)
        self._norm_layer = nn.BatchNorm2d
        self.inplanes, self.dilation, self.groups, self.base_width = width, 1, 1, 64
        self.conv1 = nn.Conv2d(3, width, kernel_size=7, stride=2, padding=3, bias=False)
        self.bn1 = nn.BatchNorm2d(width)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        self.layer1 = self._make_layer(tv_models.resnet.Bottleneck, width, layers[0])
        self.layer2 = self._make_layer(tv_models.resnet.Bottleneck, width * 2, layers[1], stride=2)
        self.layer3 = self._make_layer(tv_models.resnet.Bottleneck, width * 4, layers[2], stride=2)
        self.layer4 = self._make_layer(tv_models.resnet.Bottleneck, width * 8, layers[3], stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(width * 8 * 4, 1000)


def build_artscore_network(width: int = 64, layers: Sequence[int] = RESNET50_LAYERS) -> tv_models.ResNet:
    """ResNet-50 (or its narrower variant) with ArtScore's head; random weights."""
    net = tv_models.resnet50() if (width, tuple(layers)) == (64, RESNET50_LAYERS) else _NarrowResNet(width, layers)
    net.fc = artscore_head(net.fc.in_features)
    return net


def load_artscore_network(path: Path) -> tuple[tv_models.ResNet, str]:
    """The network with the weights of `path` and its label (`ResNet-50` for the released layout)."""
    what = f"ArtScore checkpoint {path} (MASC_ARTSCORE_CHECKPOINT)"
    state = read_state_dict(path, what=what)
    if "conv1.weight" not in state:
        raise ModelUnavailableError(f"{what}: the checkpoint lacks the key 'conv1.weight'; it is not ArtScore's "
                                    "ResNet state dict")
    width = int(state["conv1.weight"].shape[0])
    layers = [len({m.group(1) for k in state if (m := re.match(rf"layer{i}\.(\d+)\.", k))}) for i in range(1, 5)]
    if min(layers) < 1:
        raise ModelUnavailableError(f"{what}: the checkpoint has block counts {layers}; a ResNet has 4 stages")
    net = load_strict(build_artscore_network(width, layers), state, what=what).eval()
    label = "ResNet-50" if (width, tuple(layers)) == (64, RESNET50_LAYERS) else f"ResNet (stem {width}, {layers})"
    return net, label


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

    def __init__(self, model: nn.Module, info: ArtScoreInfo, *, batch_size: int = BATCH_SIZE,
                 cache_size: int = CACHE_SIZE) -> None:
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
            batch = torch.stack([ART_TRANSFORM(img.pixels.convert("RGB")) for img in images[start:start + self.batch_size]])
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
    path = resolve_weights_file(ids.artscore, filename=RELEASED_FILE, what="ArtScore checkpoint",
                                setting="artscore_checkpoint", cache_dir=settings.resolved_cache_dir)
    net, label = load_artscore_network(path)
    net = in_conv_layout(cast_model(net, device, dtype, float32_parts=("fc",)), device)
    info = ArtScoreInfo(model_id=str(path), revision="local", device=device, dtype=dtype, architecture=label,
                        float32_parts=tuple(float32_parts(net)))
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
        return {"architecture": info.architecture,
                "preprocess": f"RGB, resize ({SIZE}, {SIZE}) bilinear (squashed), ImageNet mean/std",
                "convention": "raw regression output; only relative values (rankings) mean something",
                **precision_params(info.dtype, list(info.float32_parts))}
