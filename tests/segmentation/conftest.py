"""Fixtures of the segmentation tests: the tiny SAM and SAM 3 demo checkpoints, written once per session through
the same `write_demo_weights` code path as `masc-ui demo-weights`, and small test images."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image


@pytest.fixture(scope="session")
def seg_weights(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from masc_ui.models.demo import write_demo_weights

    root = tmp_path_factory.mktemp("seg-demo-weights")
    write_demo_weights(root, ["sam-vit-tiny", "sam3"])
    return root


@pytest.fixture(scope="session")
def tiny_sam_checkpoint(seg_weights: Path) -> Path:
    return seg_weights / "sam-vit-tiny" / "sam_vit_tiny.pth"


@pytest.fixture()
def seg_settings(seg_weights: Path, tmp_path: Path):
    from masc_ui.settings import Settings

    return Settings(
        profile="demo",
        demo_weights_dir=seg_weights,
        device="cpu",
        dtype="float32",
        data_dir=tmp_path / "data",
        cache_dir=tmp_path / "cache",
    )


@pytest.fixture(scope="session")
def make_image():
    """`make_image(width, height, seed=0)` -> an RGB noise PIL image of (width, height) pixels."""

    def make(width: int, height: int, seed: int = 0) -> Image.Image:
        pixels = np.random.default_rng(seed).integers(0, 256, (height, width, 3), dtype=np.uint8)
        return Image.fromarray(pixels, mode="RGB")

    return make
