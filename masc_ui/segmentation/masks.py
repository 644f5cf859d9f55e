"""Mask utilities: editor drawings and files -> bool masks, resizing, clean-up, PNG encoding, overlays.

Every function here returns bool (H, W) masks. Sizes are given the PIL way, `(W, H)` = (width, height) in
pixels; arrays are indexed `[y, x]`. Numeric masks passed in follow METRICS.md ("Inputs"): foreground =
non-zero; mask files follow `masc_ui.imaging.load_mask_file`'s documented rule.

Storing is the one exception: `mask_to_png`, the package's one mask encoder (the app's Save, batch's text masks,
the importers, `masc-ui segment`), binarizes a soft mask at weight >= `STORED_FOREGROUND` (0.5, after
`as_mask_array`'s scaling: uint8 >= 128 of 255), METRICS.md's patch-weight convention (PF hides patches with
weight >= 0.5; CLIP-I-Seg keeps pixels >= 0.5), so a stored mask keeps exactly the foreground the metrics used.
Hard masks (bool, 0/1, 0/255) are stored as they are.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageColor
from scipy import ndimage

from ..errors import InputError
from ..imaging import InputImage, as_input_image, as_mask_array, load_image, load_mask_alpha, load_mask_file

Size = tuple[int, int]
"""(width, height) in pixels."""
Color = str | Sequence[int]
"""An RGB triple 0..255 or a colour name / `#rrggbb` string."""

_EIGHT_CONNECTED = np.ones((3, 3), dtype=bool)
STORED_FOREGROUND = 0.5
"""Weight at or above which a soft mask's pixel is stored as foreground (see the module docstring)."""


def as_bool_mask(mask: object, *, name: str = "mask") -> np.ndarray:
    """A validated 2-D mask as bool (H, W): bool kept, numbers -> non-zero is foreground."""
    arr = np.asarray(mask) if not isinstance(mask, np.ndarray) else mask
    if arr.dtype == bool and arr.ndim == 2 and arr.size:
        return arr
    return as_mask_array(mask, name=name) > 0


def mask_from_editor(value: Mapping[str, Any] | None, size: Size | None = None) -> np.ndarray:
    """The mask drawn in a Gradio `ImageEditor`: bool (H, W), foreground = any pixel painted (alpha > 0) on
    any of its brush layers.

    `value` is the editor's value, a dict `{"background": image, "layers": [image, ...], "composite": image}`
    (gradio's `EditorValue`) whose images are numpy arrays, PIL images or file paths (the editor's `type`);
    the layers must keep their transparency (the editor's default `image_mode="RGBA"`). `size` is the
    (W, H) of the image the mask is for; layers of another size are resized with nearest neighbour; None =
    the background's size. No layers or nothing painted -> an all-False mask.
    """
    if not isinstance(value, Mapping) or "layers" not in value:
        raise InputError(
            "the image editor value must be a dict with 'background', 'layers' and 'composite' "
            f"(gradio ImageEditor), got {type(value).__name__}"
        )
    layers = value.get("layers") or []
    if size is None:
        reference = value.get("background") if value.get("background") is not None else (layers[0] if layers else None)
        if reference is None:
            raise InputError("the image editor value has neither a background nor layers: upload an image first")
        size = _image_size(reference, "editor background")
    size = _check_size(size)
    mask = np.zeros((size[1], size[0]), dtype=bool)
    for i, layer in enumerate(layers):
        if layer is None:
            continue
        alpha = _layer_alpha(layer, f"editor layer {i + 1}")
        mask |= resize_mask(alpha > 0, size)
    return mask


def mask_from_file(
    src: str | Path | bytes | Image.Image, size: Size | None = None, *, name: str = "mask file"
) -> np.ndarray:
    """A mask file (PNG/JPEG/..., modes L, LA, RGB, RGBA, P, I;16, ...) read by `load_mask_file`'s rule,
    resized with nearest neighbour to `size` (W, H) when given."""
    mask = load_mask_file(src, name=name)
    return mask if size is None else resize_mask(mask, size)


def resize_mask(mask: object, size: Size) -> np.ndarray:
    """`mask` resized to `size` = (W, H) with nearest neighbour; bool (H, W)."""
    mask = as_bool_mask(mask)
    size = _check_size(size)
    if mask.shape == (size[1], size[0]):
        return mask
    img = Image.fromarray(mask.astype(np.uint8) * 255, mode="L").resize(size, Image.Resampling.NEAREST)
    return np.asarray(img) > 127


def clean_mask(mask: object, fill_holes: bool = True, min_speck: int = 0, keep_largest: bool = False) -> np.ndarray:
    """Tidy a mask, in this order: fill enclosed holes, drop foreground pieces smaller than `min_speck`
    pixels, keep only the largest piece. Pieces are 8-connected; holes are background regions that do not
    touch the image border. Returns bool (H, W); an empty mask stays empty."""
    mask = as_bool_mask(mask).copy()
    if min_speck < 0:
        raise InputError(f"min_speck must be >= 0 pixels, got {min_speck}")
    if fill_holes:
        mask = ndimage.binary_fill_holes(mask)
    if min_speck > 0 or keep_largest:
        labels, n = ndimage.label(mask, structure=_EIGHT_CONNECTED)
        if n:
            sizes = np.bincount(labels.ravel())[1:]
            keep = sizes >= min_speck
            if keep_largest:
                largest = np.zeros_like(keep)
                largest[int(np.argmax(sizes))] = True
                keep &= largest
            mask = np.concatenate([[False], keep])[labels]
    return mask


def mask_fraction(mask: object) -> float:
    """Share of the image the mask covers, in [0, 1]."""
    return float(as_bool_mask(mask).mean())


def mask_to_png(mask: object, *, name: str = "mask") -> bytes:
    """A mask as PNG bytes: 8-bit grey, 255 = foreground (bool True, or weight >= `STORED_FOREGROUND` after
    `as_mask_array`), 0 = background. Deterministic (same mask, same bytes: no metadata, fixed compression), so
    the bytes can be content-addressed."""
    arr = np.asarray(mask) if not isinstance(mask, np.ndarray) else mask
    if not (arr.dtype == bool and arr.ndim == 2 and arr.size):
        arr = as_mask_array(mask, name=name) >= STORED_FOREGROUND
    buf = io.BytesIO()
    Image.fromarray(arr.astype(np.uint8) * 255, mode="L").save(buf, format="PNG", compress_level=6)
    return buf.getvalue()


def mask_from_png(data: bytes) -> np.ndarray:
    """The inverse of `mask_to_png` (any mask PNG, by the mask-file rule)."""
    return load_mask_file(data, name="mask PNG")


def overlay_mask(
    image: InputImage | Image.Image, mask: object, opacity: float = 0.5, color: Color = (255, 48, 48), outline: int = 2
) -> Image.Image:
    """`image` (RGB) with the mask tinted in `color` at `opacity` (0 = invisible, 1 = opaque) and its
    boundary drawn `outline` pixels wide at full colour (0 = no outline). A mask of another size is resized
    to the image with nearest neighbour."""
    if not 0.0 <= opacity <= 1.0:
        raise InputError(f"overlay opacity must be within [0, 1], got {opacity}")
    if outline < 0:
        raise InputError(f"overlay outline must be >= 0 pixels, got {outline}")
    rgb = as_input_image(image).pixels
    mask = resize_mask(mask, rgb.size)
    tint = np.asarray(_rgb(color), dtype=np.float32)
    pixels = np.asarray(rgb, dtype=np.float32).copy()
    pixels[mask] = (1.0 - opacity) * pixels[mask] + opacity * tint
    if outline and mask.any():
        inner = ndimage.binary_erosion(mask, structure=_EIGHT_CONNECTED, iterations=outline, border_value=0)
        pixels[mask & ~inner] = tint
    return Image.fromarray(np.clip(pixels + 0.5, 0, 255).astype(np.uint8), mode="RGB")


def _layer_alpha(layer: Any, name: str) -> np.ndarray:
    if isinstance(layer, np.ndarray):
        if layer.ndim == 3 and layer.shape[2] in (2, 4):
            alpha = layer[..., -1]
            return alpha if alpha.dtype == np.uint8 else np.asarray(as_mask_array(alpha, name=name) * 255)
        raise InputError(
            f"{name}: a brush layer needs an alpha channel (H, W, 4), got shape {layer.shape}; "
            "create the editor with image_mode='RGBA'"
        )
    if isinstance(layer, (str, Path, bytes, Image.Image)):
        alpha = load_mask_alpha(layer, name=name)
        if alpha is None:
            raise InputError(
                f"{name}: the brush layer has no transparency, so strokes cannot be told from "
                "the background; create the editor with image_mode='RGBA'"
            )
        return alpha
    raise InputError(f"{name}: expected a numpy array, PIL image or file path, got {type(layer).__name__}")


def _image_size(image: Any, name: str) -> Size:
    if isinstance(image, np.ndarray) and image.ndim >= 2:
        return int(image.shape[1]), int(image.shape[0])
    if isinstance(image, Image.Image):
        return image.size
    if isinstance(image, (str, Path, bytes)):
        return load_image(image, name=name).size
    raise InputError(f"{name}: expected a numpy array, PIL image or file path, got {type(image).__name__}")


def _check_size(size: object) -> Size:
    if (
        not isinstance(size, (tuple, list))
        or len(size) != 2
        or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v > 0 for v in size)
    ):
        raise InputError(f"mask size must be (width, height) in whole pixels > 0, got {size!r}")
    return int(size[0]), int(size[1])


def _rgb(color: Color) -> tuple[int, int, int]:
    if isinstance(color, str):
        try:
            return ImageColor.getrgb(color)[:3]
        except ValueError:
            raise InputError(f"overlay colour {color!r} is not a colour name or #rrggbb") from None
    if (
        isinstance(color, (tuple, list))
        and len(color) == 3
        and all(isinstance(c, (int, np.integer)) and 0 <= c <= 255 for c in color)
    ):
        return int(color[0]), int(color[1]), int(color[2])
    raise InputError(f"overlay colour must be (r, g, b) with 0..255 values or a colour string, got {color!r}")
