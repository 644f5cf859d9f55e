"""A stored dataset for the pairwise use-case tests: outputs of several methods for several references and prompts,
each image a small distinct PNG (decodable, so task views can be built)."""

from __future__ import annotations

import io
import zlib
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image


def png(seed: int, size: int = 12) -> bytes:
    """A small RGB PNG whose pixels depend on `seed`."""
    pixels = np.random.default_rng(seed).integers(0, 256, (size, size, 3), dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="PNG")
    return buffer.getvalue()


def decoded(data: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))


def shown(path: Path) -> np.ndarray:
    """The pixels of a file handed to a rater (a PNG of RGB pixels: `workbench.blind_files`)."""
    with Image.open(path) as image:
        assert image.format == "PNG" and image.mode == "RGB", (image.format, image.mode)
        return np.asarray(image)


def add_outputs(
    store: Any,
    dataset: str = "ds",
    methods: tuple[str, ...] = ("m0", "m1", "m2", "m3"),
    references: int = 3,
    prompts: tuple[str, ...] = ("a dog on a beach",),
    for_rating: bool = True,
) -> list[Any]:
    """One output per (reference, prompt, method), keys `r<i>/p<j>/<method>`, the dataset marked for rating (as an
    import marks it) unless `for_rating` is False; returns the sample records."""
    out = []
    for r in range(references):
        ref = store.images.add(png(10_000 + r))
        for p, prompt in enumerate(prompts):
            for _m, method in enumerate(methods):
                seed = 1 + len(out) + 1000 * (zlib.crc32(dataset.encode()) % 1000)
                out.append(
                    store.samples.add(
                        dataset,
                        references=[ref],
                        output=store.images.add(png(seed)),
                        prompt=prompt,
                        subject=f"subject {r}",
                        method=method,
                        external_key=f"r{r}/p{p}/{method}",
                    )
                )
    store.samples.set_for_rating(dataset, for_rating)
    return out
