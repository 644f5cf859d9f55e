"""What the benchmark scripts share: random SigLIP2 NaFlex checkpoints and synthetic images/masks."""
from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
from PIL import Image

from masc_ui.models.demo.siglip import build_naflex

SIGLIP_SIZES = {
    "tiny": dict(hidden=32, layers=2, heads=2, intermediate=64, num_patches=256),
    "base": dict(hidden=768, layers=12, heads=12, intermediate=3072, num_patches=256),
}
"""Random SigLIP2 NaFlex shapes: `base` is siglip2-base-patch16's (hidden 768, 12 layers)."""
REF_SIZES = [(640, 480), (480, 640), (512, 512), (800, 533), (533, 800)]
OUT_SIZE = (512, 512)


def naflex_checkpoint(workdir: Path, size: str) -> Path:
    """A seeded random SigLIP2 NaFlex checkpoint of `size`, built once under `workdir`; the folder name says
    `naflex` because masc-metric detects NaFlex by name."""
    path = workdir / f"siglip2-{size}-patch16-naflex-random"
    if not (path / "model.safetensors").exists():
        print(f"building the {size} random checkpoint in {path} (once) ...", flush=True)
        tmp = workdir / f".building-{size}"
        shutil.rmtree(tmp, ignore_errors=True)
        build_naflex(tmp, seed=0, **SIGLIP_SIZES[size])
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.rename(path)
    return path


def random_image(rng: np.random.Generator, size: tuple[int, int]) -> Image.Image:
    """A smooth random RGB image of `size` (W, H)."""
    w, h = size
    coarse = rng.integers(0, 256, (h // 16, w // 16, 3), dtype=np.uint8)
    return Image.fromarray(coarse).resize((w, h), Image.BILINEAR)


def random_ellipse(size: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    """A uint8 (H, W) mask (0/255) of a random ellipse near the centre of an image of `size` (W, H)."""
    w, h = size
    yy, xx = np.mgrid[0:h, 0:w]
    cy, cx = h * rng.uniform(0.4, 0.6), w * rng.uniform(0.4, 0.6)
    ry, rx = h * rng.uniform(0.2, 0.35), w * rng.uniform(0.2, 0.35)
    return ((((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2) <= 1).astype(np.uint8) * 255
