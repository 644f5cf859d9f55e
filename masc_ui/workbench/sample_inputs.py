"""The checks every sample's pieces pass, wherever they come from (an upload, a CLI file, the database): an image
big enough to judge, a mask of its image's size (never stretched silently), a video output's mask as frame masks."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..errors import InputError
from ..imaging import InputImage, InputVideo, as_mask_array
from ..metrics.sample import Sample
from ..metrics.video.frame_masks import FrameMasks

MIN_IMAGE_SIDE = 32
"""Smallest width and height, in pixels, of an image scored or saved: below it there is nothing for a person or a
metric to judge (a 32 x 32 image is already only 2 x 2 patches of a 16-pixel ViT), so such uploads are refused."""


def check_judgeable(image: InputImage) -> InputImage:
    """`image` when both its sides are at least `MIN_IMAGE_SIDE` pixels, else InputError naming it."""
    w, h = image.size
    if min(w, h) < MIN_IMAGE_SIDE:
        raise InputError(
            f"{image.name} is {w}x{h} pixels: too small to judge. Images need at least {MIN_IMAGE_SIDE} "
            f"pixels on each side; upload the full-size image"
        )
    return image


def check_mask_sizes(sample: Sample, names: Sequence[str] = ()) -> Sample:
    """`sample` when each of its mask arrays has its image's size (a reference mask its reference's, an image
    output's mask the output's), else InputError naming the mask and both sizes. The frame masks of a video output
    are checked by `FrameMasks` itself. `names`: what to call each reference's mask, then the output's (default
    "the mask of reference 1", ..., "the mask of the output")."""
    refs = len(sample.refs)
    called = list(names) if len(names) == refs + 1 else [f"the mask of reference {i + 1}" for i in range(refs)]
    called += [] if len(called) == refs + 1 else ["the mask of the output"]
    pairs = [(called[i], mask, image) for i, (mask, image) in enumerate(zip(sample.ref_masks, sample.refs))]
    if not isinstance(sample.out, InputVideo) and not isinstance(sample.out_mask, FrameMasks):
        pairs.append((called[-1], sample.out_mask, sample.out))
    for what, mask, image in pairs:
        if mask is None:
            continue
        h, w = np.shape(mask)[:2]
        if (w, h) != tuple(image.size):
            raise InputError(
                f"{what} is {w}x{h} pixels but its image is {image.size[0]}x{image.size[1]}: a mask "
                "must have its image's size (nothing is stretched silently). Make the mask on this "
                f"image, or resize it to {image.size[0]}x{image.size[1]} first"
            )
    return sample


def judgeable(output: InputImage | InputVideo) -> InputImage | InputVideo:
    """`check_judgeable` for an image output; a video output as it is (its frames are checked by its limits)."""
    return output if isinstance(output, InputVideo) else check_judgeable(output)


def output_mask(
    output: InputImage | InputVideo, mask: np.ndarray | FrameMasks | None, frame: int, name: str
) -> np.ndarray | FrameMasks | None:
    """The output mask as a `Sample` holds it: a validated array for an image; for a video, a `FrameMasks` (given,
    or an array drawn on frame `frame` and reused on every frame); None stays None."""
    if mask is None:
        return None
    if isinstance(output, InputVideo):
        if isinstance(mask, FrameMasks):
            return mask
        if not 0 <= frame < output.frame_count:
            raise InputError(
                f"{name}: it was drawn on frame {frame}, but the video has frames 0..{output.frame_count - 1}"
            )
        return FrameMasks.static(mask, frame, name=name)
    if isinstance(mask, FrameMasks):
        raise InputError(f"{name}: frame masks belong to a video output, and the output is an image")
    return as_mask_array(mask, name=name)
