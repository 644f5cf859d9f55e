"""Tiny random DINO-style ViT (model + image processor), shaped like `facebook/dino-vits16` (patch 16,
224 px, CLS token, no pooling layer) with tiny widths, saved with `save_pretrained`. Its numbers mean nothing.

The saved image processor is a `ViTImageProcessor` with ImageNet mean/std, like the real checkpoint's. DINO-I
reads only its mean/std; the geometry (resize 256 bicubic, centre crop 224) is METRICS.md's and lives in
`masc_ui.metrics.dino.dino_i`.
"""

from __future__ import annotations

from pathlib import Path

import torch

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


def build(out_dir: Path, seed: int) -> None:
    """Write a tiny random DINO ViT-S/16-shaped checkpoint + image processor into `out_dir`."""
    from transformers import ViTConfig, ViTImageProcessor, ViTModel

    config = ViTConfig(
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        image_size=224,
        patch_size=16,
        qkv_bias=True,
        layer_norm_eps=1e-6,
    )
    torch.manual_seed(seed)
    ViTModel(config, add_pooling_layer=False).eval().save_pretrained(out_dir)
    ViTImageProcessor(
        size={"height": 224, "width": 224}, image_mean=list(IMAGENET_MEAN), image_std=list(IMAGENET_STD)
    ).save_pretrained(out_dir)
