"""Mask files (PNG/JPEG/...; modes L, LA, RGB, RGBA, P, PA, I;16, I, F, 1) and mask arrays. The foreground rule is
1. if the file has transparency (an alpha channel, or a palette with transparency) and that alpha is
   not uniformly opaque, foreground = alpha >= 128;
2. otherwise foreground = grey level >= 50% of the mode's range (L/RGB via ITU-R 601 luma: 128 of 255;
   16-bit: 32768 of 65535; float: 0.5).
So a black/white PNG, a brush layer with transparent background, and a 16-bit label image all work.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image

from ..errors import InputError
from .images import DEFAULT_MAX_PIXELS, alpha_channel, open_pil


def load_mask_file(
    src: str | Path | bytes | Image.Image, *, name: str = "mask", max_pixels: int = DEFAULT_MAX_PIXELS
) -> np.ndarray:
    """Read a mask file as a bool (H, W) array by the module's foreground rule."""
    img = src if isinstance(src, Image.Image) else open_pil(src, name, max_pixels)
    try:
        img.load()
        alpha = alpha_channel(img)
        if alpha is not None and alpha.min() < 255:
            return alpha >= 128
        return _grey(img) >= 0.5
    except (OSError, ValueError) as exc:
        raise InputError(f"{name}: the mask file is damaged or truncated ({exc}); re-export it") from None


def load_mask_alpha(
    src: str | Path | bytes | Image.Image, *, name: str = "mask layer", max_pixels: int = DEFAULT_MAX_PIXELS
) -> np.ndarray | None:
    """The transparency of an image file (e.g. a brush layer of an image editor) as uint8 (H, W) alpha,
    0 = transparent ... 255 = opaque; None when the image has no alpha channel or palette transparency."""
    img = src if isinstance(src, Image.Image) else open_pil(src, name, max_pixels)
    try:
        img.load()
        return alpha_channel(img)
    except (OSError, ValueError) as exc:
        raise InputError(f"{name}: the image data is damaged or truncated ({exc}); re-export it") from None


def as_mask_array(mask: object, *, name: str = "mask") -> np.ndarray:
    """Validate an in-memory mask and return it as float32 (H, W) in [0, 1] (METRICS.md "Inputs").

    bool -> {0, 1}; numbers: a mask whose maximum is > 1 is divided by 255; then clamped to [0, 1].
    Raises `InputError` for None, non-2-D arrays, non-numeric dtypes, NaN/inf, negative values.
    """
    if mask is None:
        raise InputError(f"{name} is missing: pass a 2-D array (H, W) with the subject as non-zero pixels")
    if isinstance(mask, Image.Image):
        raise InputError(f"{name} is a PIL image: read mask files with load_mask_file(), or pass np.asarray(...)")
    arr = np.asarray(mask)
    if arr.dtype == object or not (arr.dtype == bool or np.issubdtype(arr.dtype, np.number)):
        raise InputError(f"{name} must hold numbers or booleans, got dtype {arr.dtype}")
    if np.issubdtype(arr.dtype, np.complexfloating):
        raise InputError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    if arr.ndim != 2:
        raise InputError(f"{name} must be 2-D (H, W), got shape {arr.shape}; pass a single-channel mask")
    if arr.size == 0:
        raise InputError(f"{name} is empty (shape {arr.shape})")
    out = arr.astype(np.float32)
    if not np.isfinite(out).all():
        raise InputError(f"{name} contains NaN or infinite values")
    if out.min() < 0:
        raise InputError(f"{name} has negative values (min {out.min():g}); masks are 0..1 or 0..255")
    if out.max() > 1.0:
        out = out / 255.0
    return np.clip(out, 0.0, 1.0)


def _grey(img: Image.Image) -> np.ndarray:
    """Grey level in [0, 1] of any mode."""
    if img.mode in ("I;16", "I;16B", "I;16L"):
        return np.asarray(img, dtype=np.float64) / 65535.0
    if img.mode == "I":
        arr = np.asarray(img, dtype=np.float64)
        return arr / (65535.0 if arr.max() > 255 else 255.0)
    if img.mode == "F":
        return np.asarray(img, dtype=np.float64)
    if img.mode == "1":
        return np.asarray(img, dtype=np.float64)
    return np.asarray(img.convert("L"), dtype=np.float64) / 255.0
