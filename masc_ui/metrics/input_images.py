"""Images of a batch as `InputImage`s, each distinct object converted once per call.

`as_input_image` hashes a PIL image by encoding it as PNG (about 0.1 s for 512x512 on a CPU); a reference
shared by N samples of a batch is the same object N times, so it is converted once here. `InputImage`s (what
the edges build) pass through unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..imaging import InputImage, as_input_image


def input_images(images: Sequence[Any], names: Sequence[str]) -> list[InputImage]:
    """`as_input_image(images[i], name=names[i])` for each i, converting each distinct object once."""
    seen: dict[int, InputImage] = {}
    out = []
    for image, name in zip(images, names):
        key = id(image)
        if key not in seen:
            seen[key] = as_input_image(image, name=name)
        out.append(seen[key])
    return out
