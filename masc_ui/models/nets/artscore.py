"""ArtScore's network (Chen et al., IEEE TMM 2024, `jchen175/ArtScore`): torchvision ResNet-50 whose `fc` is
Linear(2048, 1000) - ReLU - Dropout(0.5) - Linear(1000, 1), and its strict loader. The released checkpoint is a
plain state dict of that module (keys `conv1.weight`, `bn1.*`, `layer1.0.conv1.weight`, ..., `layer4.2.bn3.*`,
`fc.0.{weight,bias}`, `fc.3.{weight,bias}`). The loader reads the block counts and the stem width from the file:
(64, [3, 4, 6, 3]) is torchvision's `resnet50()`; other values build the same Bottleneck ResNet narrower (the tiny
demo checkpoint).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from torch import nn
from torchvision import models as tv_models

from ...errors import ModelUnavailableError
from ..state_dicts import load_strict, read_state_dict

RELEASED_FILE = "loss@listMLE_model@resnet50_denseLayer@True_batch_size@16_lr@0.0001_dropout@0.5_E_8.pth"
RESNET50_LAYERS = (3, 4, 6, 3)
HEAD_HIDDEN = 1000
DROPOUT = 0.5


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
        raise ModelUnavailableError(
            f"{what}: the checkpoint lacks the key 'conv1.weight'; it is not ArtScore's ResNet state dict"
        )
    width = int(state["conv1.weight"].shape[0])
    layers = [len({m.group(1) for k in state if (m := re.match(rf"layer{i}\.(\d+)\.", k))}) for i in range(1, 5)]
    if min(layers) < 1:
        raise ModelUnavailableError(f"{what}: the checkpoint has block counts {layers}; a ResNet has 4 stages")
    net = load_strict(build_artscore_network(width, layers), state, what=what).eval()
    label = "ResNet-50" if (width, tuple(layers)) == (64, RESNET50_LAYERS) else f"ResNet (stem {width}, {layers})"
    return net, label
