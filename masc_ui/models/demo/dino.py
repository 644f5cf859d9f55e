"""Tiny random DINO-style ViTs (model + image processor) with tiny widths, saved with `save_pretrained`. Their
numbers mean nothing.

`build`: shaped like `facebook/dino-vits16` (patch 16, 224 px, CLS token, no pooling layer). The saved image
processor is a `ViTImageProcessor` with ImageNet mean/std, like the real checkpoint's. DINO-I reads only its
mean/std; the geometry (resize 256 bicubic, centre crop 224) is METRICS.md's and lives in
`masc_ui.metrics.dino.dino_i`.

`build_v2`: a `Dinov2Model` shaped like `facebook/dinov2-*` (patch 14, position embeddings for 518 px,
interpolated to the 224 px crop, layer scale, final LayerNorm) with the real checkpoints' `BitImageProcessor`
configuration (shortest edge 256 bicubic, centre crop 224, ImageNet mean/std).
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


def build_v2(out_dir: Path, seed: int, *, hidden: int = 32, layers: int = 2, heads: int = 2) -> None:
    """Write a random DINOv2-shaped `Dinov2Model` (tiny by default; `hidden=768, layers=12, heads=12` is
    dinov2-base's shape) + its `BitImageProcessor` into `out_dir`."""
    from transformers import BitImageProcessor, Dinov2Config, Dinov2Model
    from transformers.image_utils import PILImageResampling

    config = Dinov2Config(
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        mlp_ratio=4,
        image_size=518,
        patch_size=14,
        layerscale_value=1.0,
    )
    torch.manual_seed(seed)
    Dinov2Model(config).eval().save_pretrained(out_dir)
    BitImageProcessor(
        size={"shortest_edge": 256},
        crop_size={"height": 224, "width": 224},
        resample=PILImageResampling.BICUBIC,
        image_mean=list(IMAGENET_MEAN),
        image_std=list(IMAGENET_STD),
    ).save_pretrained(out_dir)
