"""Tiny random HPSv2.1 and aesthetic-predictor checkpoints in their released file layouts, loaded back through the
real loaders (`masc_ui.models.nets.hpsv2`, `masc_ui.models.nets.aesthetic`). Their numbers mean nothing.

- `build_hps`: an OpenCLIP CLIP of `TINY_HPS` sizes (ViT 224/14 of width 32, 2 blocks; text transformer of width 16,
  2 layers, CLIP's 49408-token vocabulary and 77 positions, so OpenCLIP's own tokenizer fits it), saved as the release
  is (`{"state_dict": ...}` in `HPS_v2.1_compressed.pt`), with its sizes in `open_clip_config.json` beside it.
- `build_aesthetic`: the aesthetic predictor's MLP (released widths 1024-128-64-16-1) reading the tiny demo CLIP's
  16-d embeddings (`demo.clip.PROJECTION_DIM`), saved as a plain state dict named like the released file.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

TINY_HPS = {
    "embed_dim": 16,
    "vision_cfg": {"image_size": 224, "layers": 2, "width": 32, "head_width": 16, "patch_size": 14},
    "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 16, "heads": 2, "layers": 2},
}


def build_hps(out_dir: Path, seed: int) -> None:
    import open_clip

    from ..nets.hpsv2 import CONFIG_FILE, RELEASED_FILE

    torch.manual_seed(seed)
    model = open_clip.CLIP(**TINY_HPS)
    with torch.no_grad():
        for p in model.parameters():  # OpenCLIP's init leaves LayerNorms at 1/0; make every tensor matter
            p.add_(0.02 * torch.randn_like(p))
    (out_dir / CONFIG_FILE).write_text(json.dumps({"model_cfg": TINY_HPS}, indent=2))
    torch.save({"state_dict": model.state_dict()}, out_dir / RELEASED_FILE)


def build_aesthetic(out_dir: Path, seed: int) -> None:
    from ..nets.aesthetic import RELEASED_FILE, AestheticHead
    from .clip import PROJECTION_DIM

    torch.manual_seed(seed)
    head = AestheticHead(PROJECTION_DIM)
    torch.save(head.state_dict(), out_dir / RELEASED_FILE)
