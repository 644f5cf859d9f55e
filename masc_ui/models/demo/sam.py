"""Tiny random Segment Anything checkpoint (`vit_tiny`), saved as a plain state dict like the official files."""

from __future__ import annotations

from pathlib import Path

import torch

from ..nets.sam_variants import build_sam

FILENAME = "sam_vit_tiny.pth"


def build(out_dir: Path, seed: int) -> None:
    """Write `out_dir/sam_vit_tiny.pth` (~0.5 MB), loadable with `build_sam("vit_tiny", path)`."""
    torch.manual_seed(seed)
    sam = build_sam("vit_tiny")
    torch.save(sam.state_dict(), Path(out_dir) / FILENAME)
