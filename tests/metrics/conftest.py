"""Fixtures of the face-metric tests: a tiny SCRFD graph in an insightface-style model-pack folder."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from torch import nn
from torch.nn import functional as F

SCRFD_STRIDES = (8, 16, 32)


class TinyScrfd(nn.Module):
    """Outputs in SCRFD's 9-output layout (scores x3, box distances x3, landmark offsets x3; 2 anchors per cell,
    (row, col, anchor) order) from a random 1x1 conv on the average-pooled image: a stand-in for det_10g.onnx."""

    def __init__(self) -> None:
        super().__init__()
        self.heads = nn.ModuleList(nn.Conv2d(3, 2 * 15, 1) for _ in SCRFD_STRIDES)

    def forward(self, x: torch.Tensor):
        scores, boxes, points = [], [], []
        for stride, head in zip(SCRFD_STRIDES, self.heads):
            f = head(F.avg_pool2d(x, stride)).permute(0, 2, 3, 1).reshape(-1, 2, 15)
            scores.append(torch.sigmoid(4 * f[:, :, 0]).reshape(-1, 1))
            boxes.append(torch.exp(f[:, :, 1:5]).reshape(-1, 4))
            points.append(f[:, :, 5:15].reshape(-1, 10))
        return (*scores, *boxes, *points)


@pytest.fixture(scope="session")
def scrfd_pack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding `det_10g.onnx` (the tiny SCRFD-layout graph above, seeded) and `tiny_scrfd.pt` (its weights)."""
    folder = tmp_path_factory.mktemp("buffalo_tiny")
    torch.manual_seed(3)
    model = TinyScrfd().eval()
    torch.save(model.state_dict(), folder / "tiny_scrfd.pt")
    torch.onnx.export(
        model,
        (torch.zeros(1, 3, 320, 320),),
        str(folder / "det_10g.onnx"),
        dynamo=False,
        input_names=["input.1"],
        output_names=[f"out{i}" for i in range(9)],
    )
    return folder


@pytest.fixture(scope="session")
def tiny_scrfd(scrfd_pack: Path) -> TinyScrfd:
    """The torch module exported to `scrfd_pack`'s ONNX graph (for independent computations)."""
    model = TinyScrfd().eval()
    model.load_state_dict(torch.load(scrfd_pack / "tiny_scrfd.pt"))
    return model
