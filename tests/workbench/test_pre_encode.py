"""Segment Anything encodes uploaded images in the background (issue 14): the first click after an upload finds
the embedding in the cache instead of running the image encoder."""

from __future__ import annotations

import numpy as np
from PIL import Image

from masc_ui.imaging import as_input_image
from masc_ui.models.loaded_models import ModelRegistry
from masc_ui.segmentation import build_sam_service
from masc_ui.workbench.masks import Segmentation


def _image(seed: int):
    pixels = np.random.default_rng(seed).integers(0, 255, (48, 64, 3), dtype=np.uint8)
    return as_input_image(Image.fromarray(pixels), name=f"image {seed}")


def test_the_first_click_after_an_upload_finds_the_encoding_ready(demo_settings):
    models = ModelRegistry()
    segmentation = Segmentation(demo_settings, models)
    first, second = _image(1), _image(2)
    jobs = segmentation.pre_encode([first, None, second])
    assert len(jobs) == 2 and all(job.result(timeout=120) is not None for job in jobs)
    service = build_sam_service(demo_settings, models)
    before = service.cache_info()
    assert before.size == 2
    segmentation.sam_predict(first, [(10.0, 10.0, 1)], None, user=None)
    after = service.cache_info()
    assert after.hits == before.hits + 1 and after.misses == before.misses  # no encoder run for the click
    again = segmentation.pre_encode([first])  # an image already encoded is not encoded again
    assert again[0].result(timeout=120) is not None and service.cache_info().size == 2
