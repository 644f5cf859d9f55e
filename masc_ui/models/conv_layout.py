"""Memory layout of the convolutional networks (ArtScore's ResNet-50, FaceSim's IR-101): channels-last on the CPU,
the default (contiguous NCHW) elsewhere.

On the CPU, oneDNN's convolutions read channels-last tensors without reordering them; `python bench/conv_layout.py`
measures both layouts side by side (Performance page, "Channels-last convolutions"). The layout changes only the
order of the additions (float32 rounding: tested within 1e-5 of independent computations). Not measured on a GPU, so
CUDA keeps the default layout.
"""

from __future__ import annotations

from typing import TypeVar

import torch
from torch import nn

ModuleT = TypeVar("ModuleT", bound=nn.Module)


def conv_layout(device: str | torch.device) -> torch.memory_format:
    """The memory format the convolutional networks use on `device`."""
    return torch.channels_last if torch.device(device).type == "cpu" else torch.contiguous_format


def in_conv_layout(model: ModuleT, device: str | torch.device) -> ModuleT:
    """`model` with its 4-D weights in `conv_layout(device)` (in place; returns `model`)."""
    return model.to(memory_format=conv_layout(device))


def conv_input(batch: torch.Tensor, device: str | torch.device, dtype: torch.dtype) -> torch.Tensor:
    """An (N, C, H, W) batch on `device` in `dtype` and in `conv_layout(device)`."""
    return batch.to(device, dtype).contiguous(memory_format=conv_layout(device))
