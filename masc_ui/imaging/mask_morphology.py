"""Growing and shrinking a mask by a few pixels: the perturbations of the mask-sensitivity check.

A mask is the (H, W) float32 array in [0, 1] of `as_mask_array`. `shift_mask(mask, px)` dilates it by `px` pixels
(`px > 0`) or erodes it by `-px` pixels (`px < 0`) with a disk of radius `|px|` (grey-level morphology: the
maximum, or the minimum, over the disk around each pixel, so a binary mask stays binary and a soft mask's edge
moves as a whole). Outside the image counts as background for erosion and as nothing for dilation: a subject
touching the border shrinks from it, and no foreground appears from beyond the frame.
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from ..errors import InputError
from .masks import as_mask_array

MAX_SHIFT_PX = 64
"""The largest dilation or erosion accepted, in pixels: beyond it the mask is no longer the same subject."""


def disk(radius: int) -> np.ndarray:
    """The (2r+1, 2r+1) bool footprint of the pixels within Euclidean distance `radius` of the centre."""
    yy, xx = np.mgrid[-radius : radius + 1, -radius : radius + 1]
    footprint: np.ndarray = (xx * xx + yy * yy) <= radius * radius
    return footprint


def shift_mask(mask: np.ndarray, px: int, *, name: str = "mask") -> np.ndarray:
    """`mask` dilated by `px` pixels (`px > 0`), eroded by `-px` (`px < 0`), or a copy of it (`px == 0`), as float32
    (H, W) in [0, 1]. InputError for a `px` that is not a whole number within +-`MAX_SHIFT_PX`."""
    if isinstance(px, bool) or not isinstance(px, (int, np.integer)):
        raise InputError(f"{name}: the mask shift must be a whole number of pixels, got {px!r}")
    if abs(int(px)) > MAX_SHIFT_PX:
        raise InputError(f"{name}: a mask shift of {px} px is too large; use at most {MAX_SHIFT_PX} px either way")
    arr = as_mask_array(mask, name=name)
    if px == 0:
        return arr.copy()
    footprint = disk(abs(int(px)))
    if px > 0:
        grown: np.ndarray = ndimage.grey_dilation(arr, footprint=footprint, mode="constant", cval=0.0)
        return grown.astype(np.float32)
    shrunk: np.ndarray = ndimage.grey_erosion(arr, footprint=footprint, mode="constant", cval=0.0)
    return shrunk.astype(np.float32)
