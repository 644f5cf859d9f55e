"""The face recognizer of FaceSim: the IR ("improved residual") backbone of CurricularFace, as TFace / OpenS2V
define it, rebuilt here as a torch module whose state-dict keys are those of the released
`glint360k_curricular_face_r101_backbone.bin` (IR-101: units 3, 13, 30, 3; widths 64, 128, 256, 512):

    input_layer.0.weight                  Conv2d(3, 64, 3, pad 1, no bias)
    input_layer.1.*                       BatchNorm2d(64)            input_layer.2.weight  PReLU(64)
    body.<n>.res_layer.0.*                BatchNorm2d(in)            .1.weight  Conv2d(in, d, 3, pad 1)
    body.<n>.res_layer.2.*                BatchNorm2d(d)             .3.weight  PReLU(d)
    body.<n>.res_layer.4.weight           Conv2d(d, d, 3, stride, pad 1)      .5.*  BatchNorm2d(d)
    body.<n>.shortcut_layer.{0,1}.*       Conv2d(in, d, 1, stride) + BatchNorm2d(d) when in != d (else MaxPool2d(1, stride))
    output_layer.0.*                      BatchNorm2d(512)   (.1 Dropout(0.4), .2 Flatten)
    output_layer.3.{weight,bias}          Linear(512 * 7 * 7, 512)
    output_layer.4.{running_mean,running_var,num_batches_tracked}   BatchNorm1d(512, affine=False)

The first unit of every stage has stride 2 (112 -> 7 over four stages). `load_recognizer` reads the stage
layout from the file (stages = runs of units of equal width), so the same code loads IR-101 and the tiny
random IR of the demo profile; every key is then checked (missing / unexpected / shape is an error).
Input: (B, 3, 112, 112) float32 RGB, (x / 255 - 0.5) / 0.5. Output: (B, E) embeddings (not normalized here).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from ...errors import ModelUnavailableError
from ..state_dicts import load_strict, read_state_dict

INPUT_SIZE = 112
FINAL_GRID = 7
IR101_UNITS = (3, 13, 30, 3)
IR101_WIDTHS = (64, 128, 256, 512)
RELEASED_FILE = "glint360k_curricular_face_r101_backbone.bin"


@dataclass(frozen=True)
class IRArchitecture:
    stem: int
    units: tuple[int, ...]
    widths: tuple[int, ...]
    embedding: int

    @property
    def label(self) -> str:
        if self.units == IR101_UNITS and self.widths == IR101_WIDTHS and self.stem == 64:
            return "IR-101"
        return f"IR (units {list(self.units)}, widths {list(self.widths)}, embedding {self.embedding})"


class IRUnit(nn.Module):
    """BN - conv3x3 - BN - PReLU - conv3x3(stride) - BN, plus the shortcut."""

    def __init__(self, inp: int, depth: int, stride: int) -> None:
        super().__init__()
        self.shortcut_layer = (
            nn.MaxPool2d(1, stride)
            if inp == depth
            else nn.Sequential(nn.Conv2d(inp, depth, 1, stride, bias=False), nn.BatchNorm2d(depth))
        )
        self.res_layer = nn.Sequential(
            nn.BatchNorm2d(inp),
            nn.Conv2d(inp, depth, 3, 1, 1, bias=False),
            nn.BatchNorm2d(depth),
            nn.PReLU(depth),
            nn.Conv2d(depth, depth, 3, stride, 1, bias=False),
            nn.BatchNorm2d(depth),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.res_layer(x) + self.shortcut_layer(x)


class IRBackbone(nn.Module):
    """The IR backbone for 112x112 inputs ending in BatchNorm1d(E, affine=False)."""

    def __init__(self, arch: IRArchitecture) -> None:
        super().__init__()
        self.arch = arch
        self.input_layer = nn.Sequential(
            nn.Conv2d(3, arch.stem, 3, 1, 1, bias=False), nn.BatchNorm2d(arch.stem), nn.PReLU(arch.stem)
        )
        units, inp = [], arch.stem
        for n_units, width in zip(arch.units, arch.widths):
            for i in range(n_units):
                units.append(IRUnit(inp, width, 2 if i == 0 else 1))
                inp = width
        self.body = nn.Sequential(*units)
        self.output_layer = nn.Sequential(
            nn.BatchNorm2d(inp),
            nn.Dropout(0.4),
            nn.Flatten(),
            nn.Linear(inp * FINAL_GRID * FINAL_GRID, arch.embedding),
            nn.BatchNorm1d(arch.embedding, affine=False),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.output_layer(self.body(self.input_layer(x)))


def ir_architecture(state: dict[str, torch.Tensor], *, what: str) -> IRArchitecture:
    """The IR layout stored in `state` (see the module docstring)."""
    for key in ("input_layer.0.weight", "output_layer.3.weight"):
        if key not in state:
            raise ModelUnavailableError(
                f"{what}: the checkpoint lacks the key {key!r}; it is not an IR backbone such as {RELEASED_FILE}"
            )
    unit_ids = sorted({int(m.group(1)) for k in state if (m := re.match(r"body\.(\d+)\.res_layer\.1\.weight$", k))})
    if not unit_ids or unit_ids != list(range(len(unit_ids))):
        raise ModelUnavailableError(
            f"{what}: the checkpoint's body units are not numbered 0..N-1 (keys body.<n>.res_layer.1.weight)"
        )
    depths = [int(state[f"body.{n}.res_layer.1.weight"].shape[0]) for n in unit_ids]
    units, widths = [], []
    for d in depths:
        if widths and widths[-1] == d:
            units[-1] += 1
        else:
            widths.append(d)
            units.append(1)
    if len(units) != 4:
        raise ModelUnavailableError(
            f"{what}: the checkpoint has {len(units)} stages of widths {widths}; an IR "
            "backbone for 112x112 faces has 4 (112 -> 7)"
        )
    linear = state["output_layer.3.weight"]
    if linear.shape[1] != widths[-1] * FINAL_GRID * FINAL_GRID:
        raise ModelUnavailableError(
            f"{what}: output_layer.3.weight has {linear.shape[1]} inputs, expected "
            f"{widths[-1]} x 7 x 7 (the 112x112 IR variant)"
        )
    return IRArchitecture(
        stem=int(state["input_layer.0.weight"].shape[0]),
        units=tuple(units),
        widths=tuple(widths),
        embedding=int(linear.shape[0]),
    )


def load_recognizer(path: Path, *, what: str = "face recognizer (MASC_FACE_RECOGNIZER)") -> IRBackbone:
    """The IR backbone with the weights of `path` (a plain state dict), in eval mode on CPU."""
    state = read_state_dict(path, what=f"{what} {path}")
    model = IRBackbone(ir_architecture(state, what=f"{what} {path}"))
    return load_strict(model, state, what=f"{what} {path}").eval()
