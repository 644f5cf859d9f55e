"""The only place that opens user images and mask files.

Images: any format Pillow reads, EXIF orientation applied, converted to RGB. Refused with a clear
`InputError`: files that are not images, truncated files, images over `max_pixels` (decompression
bombs), and empty (0-pixel) images.

Mask files (PNG/JPEG/...; modes L, LA, RGB, RGBA, P, PA, I;16, I, F, 1): the foreground rule is
1. if the file has transparency (an alpha channel, or a palette with transparency) and that alpha is
   not uniformly opaque, foreground = alpha >= 128;
2. otherwise foreground = grey level >= 50% of the mode's range (L/RGB via ITU-R 601 luma: 128 of 255;
   16-bit: 32768 of 65535; float: 0.5).
So a black/white PNG, a brush layer with transparent background, and a 16-bit label image all work.
"""
from __future__ import annotations

import hashlib
import io
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Union

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from .errors import InputError

ImageSource = Union[str, Path, bytes, Image.Image, np.ndarray]

DEFAULT_MAX_PIXELS = 40_000_000


def load_image(src: ImageSource, *, name: str = "image", max_pixels: int = DEFAULT_MAX_PIXELS) -> Image.Image:
    """Open `src` (path, bytes, PIL image, or HxWx3/HxW uint8 array) as an RGB PIL image, EXIF-rotated.

    Raises `InputError` naming `name` for missing/unreadable/truncated/huge/empty images.
    """
    if isinstance(src, np.ndarray):
        return _from_array(src, name)
    if isinstance(src, Image.Image):
        img = src
        _check_size(img.size, name, max_pixels)
    else:
        img = _open(src, name, max_pixels)
    try:
        img = ImageOps.exif_transpose(img)
        if img.mode in ("I;16", "I;16B", "I;16L", "I"):
            img = Image.fromarray((np.asarray(img, dtype=np.float64) / 257.0).clip(0, 255).astype(np.uint8))
        if img.mode in ("RGBA", "LA", "PA") or (img.mode == "P" and "transparency" in img.info):
            # Flatten transparency onto white, the way a viewer shows it.
            rgba = img.convert("RGBA")
            bg = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
            img = Image.alpha_composite(bg, rgba)
        return img.convert("RGB")
    except (OSError, ValueError) as exc:
        raise InputError(f"{name}: the image data is damaged or truncated ({exc}); re-export or re-upload it") from None


KEPT_FORMATS = {"PNG": "image/png", "JPEG": "image/jpeg", "WEBP": "image/webp"}
"""Uploaded files in these formats are kept byte for byte (stored as uploaded); any other source is stored as
a PNG of its decoded pixels."""


@dataclass(frozen=True, eq=False)
class InputImage:
    """A user image decoded once at the edge: its RGB pixels and the one content hash that every cache and
    the storage use. Build it with `open_image` (or `as_input_image`); never construct it by hand.

    Identity is the content hash: two `InputImage`s are equal when their `sha256` is.
    """

    pixels: Image.Image
    """RGB, EXIF orientation applied, transparency flattened onto white."""
    data: bytes
    """The bytes stored for it: the uploaded file itself when it is PNG/JPEG/WebP (`KEPT_FORMATS`), otherwise a
    lossless PNG of `pixels`. Decoding `data` again gives `pixels`."""
    media_type: str
    """MIME type of `data`, e.g. `image/jpeg`."""
    sha256: str
    """SHA-256 (64 lowercase hex digits) of `data`: the image's identity in caches and in storage."""
    name: str = "image"
    """What the user calls it (for messages), e.g. `reference image 1`."""
    notes: tuple[str, ...] = ()
    """What happened on the way in that the user should be told (e.g. transparency flattened onto white)."""

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) in pixels."""
        return self.pixels.size

    def __eq__(self, other: object) -> bool:
        return isinstance(other, InputImage) and other.sha256 == self.sha256

    def __hash__(self) -> int:
        return hash(self.sha256)

    def __repr__(self) -> str:
        return f"InputImage({self.name!r}, {self.size[0]}x{self.size[1]}, {self.media_type}, sha256={self.sha256[:12]})"


def open_image(src: "ImageSource | InputImage", *, name: str = "image",
               max_pixels: int = DEFAULT_MAX_PIXELS) -> InputImage:
    """Decode `src` once into an `InputImage` (see `load_image` for what is accepted and refused).

    A file path or bytes in a `KEPT_FORMATS` format keeps its bytes; a PIL image, an array or another format is
    encoded once as PNG. An `InputImage` is returned as it is.
    """
    if isinstance(src, InputImage):
        return src
    raw: bytes | None = None
    fmt = None
    source: object = src
    if isinstance(src, (str, Path, bytes, bytearray)):
        raw, label = _read_bytes(src, name)
        source = _decode(raw, label, max_pixels)
        fmt = source.format
    notes = []
    if isinstance(source, Image.Image) and _has_transparency(source):
        notes.append(f"{name} has transparency: it was flattened onto white (what metrics and raters see)")
    pixels = load_image(source, name=name, max_pixels=max_pixels)
    if raw is not None and fmt in KEPT_FORMATS:
        data, media_type = raw, KEPT_FORMATS[fmt]
    else:
        data, media_type = encode_png(pixels), "image/png"
    return InputImage(pixels=pixels, data=data, media_type=media_type, sha256=hashlib.sha256(data).hexdigest(),
                      name=name, notes=tuple(notes))


def as_input_image(src: "ImageSource | InputImage", *, name: str = "image",
                   max_pixels: int = DEFAULT_MAX_PIXELS) -> InputImage:
    """`src` itself when it already is an `InputImage`, else `open_image(src)`: the library entry points
    (which accept PIL images and arrays) call this, so images decoded at the edge are never decoded again."""
    return open_image(src, name=name, max_pixels=max_pixels)


def encode_png(img: Image.Image) -> bytes:
    """Lossless PNG bytes of `img` with no metadata and a fixed compression level, so the same pixels always
    give the same bytes (and so the same content hash)."""
    buf = io.BytesIO()
    img.save(buf, format="PNG", compress_level=1)
    return buf.getvalue()


def _has_transparency(img: Image.Image) -> bool:
    if img.mode in ("RGBA", "LA", "PA") or (img.mode == "P" and "transparency" in img.info):
        alpha = _alpha(img)
        return alpha is not None and int(alpha.min()) < 255
    return False


def load_mask_file(src: Union[str, Path, bytes, Image.Image], *, name: str = "mask",
                   max_pixels: int = DEFAULT_MAX_PIXELS) -> np.ndarray:
    """Read a mask file as a bool (H, W) array by the module's foreground rule."""
    img = src if isinstance(src, Image.Image) else _open(src, name, max_pixels)
    try:
        img.load()
        alpha = _alpha(img)
        if alpha is not None and alpha.min() < 255:
            return alpha >= 128
        return _grey(img) >= 0.5
    except (OSError, ValueError) as exc:
        raise InputError(f"{name}: the mask file is damaged or truncated ({exc}); re-export it") from None


def load_mask_alpha(src: Union[str, Path, bytes, Image.Image], *, name: str = "mask layer",
                    max_pixels: int = DEFAULT_MAX_PIXELS) -> np.ndarray | None:
    """The transparency of an image file (e.g. a brush layer of an image editor) as uint8 (H, W) alpha,
    0 = transparent ... 255 = opaque; None when the image has no alpha channel or palette transparency."""
    img = src if isinstance(src, Image.Image) else _open(src, name, max_pixels)
    try:
        img.load()
        return _alpha(img)
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


def _open(src: Union[str, Path, bytes], name: str, max_pixels: int) -> Image.Image:
    data, label = _read_bytes(src, name)
    return _decode(data, label, max_pixels)


def _read_bytes(src: Union[str, Path, bytes], name: str) -> tuple[bytes, str]:
    """The bytes of a file path or a bytes object, and the label messages use for them."""
    if isinstance(src, (str, Path)):
        path = Path(src)
        if not path.exists():
            raise InputError(f"{name}: file not found: {path}")
        if path.is_dir():
            raise InputError(f"{name}: {path} is a folder, not an image file")
        data = path.read_bytes()
        label = f"{name} ({path.name})"
    elif isinstance(src, (bytes, bytearray)):
        data = bytes(src)
        label = name
    else:
        raise InputError(f"{name}: expected a file path, bytes, a PIL image or an array, got {type(src).__name__}")
    if not data:
        raise InputError(f"{label}: the file is empty")
    return data, label


def _decode(data: bytes, label: str, max_pixels: int) -> Image.Image:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            img = Image.open(io.BytesIO(data))
            _check_size(img.size, label, max_pixels)
            img.load()
    except InputError:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise InputError(f"{label}: the image is too large to open safely; downscale it below "
                         f"{max_pixels:,} pixels") from None
    except UnidentifiedImageError:
        raise InputError(f"{label}: not an image Pillow can read; upload a PNG, JPEG or WebP file") from None
    except (OSError, SyntaxError, ValueError) as exc:
        raise InputError(f"{label}: the image data is damaged or truncated ({exc}); re-export or re-upload it") from None
    return img


def _check_size(size: tuple[int, int], label: str, max_pixels: int) -> None:
    w, h = size
    if w <= 0 or h <= 0:
        raise InputError(f"{label}: the image has no pixels ({w}x{h})")
    if w * h > max_pixels:
        raise InputError(f"{label}: {w}x{h} = {w * h:,} pixels is over the limit of {max_pixels:,}; "
                         "downscale it first")


def _from_array(arr: np.ndarray, name: str) -> Image.Image:
    if arr.ndim == 2:
        arr = np.stack([arr] * 3, axis=-1)
    if arr.ndim != 3 or arr.shape[2] not in (3, 4) or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise InputError(f"{name}: an image array must be HxWx3 (RGB) or HxW, got shape {arr.shape}")
    if arr.dtype != np.uint8:
        if np.issubdtype(arr.dtype, np.floating) and arr.size and 0.0 <= float(arr.min()) and float(arr.max()) <= 1.0:
            arr = (arr * 255.0).round()
        arr = np.clip(arr, 0, 255).astype(np.uint8)
    return Image.fromarray(np.ascontiguousarray(arr[..., :3]), mode="RGB")


def _alpha(img: Image.Image) -> np.ndarray | None:
    if img.mode in ("RGBA", "LA", "PA"):
        return np.asarray(img.getchannel("A"), dtype=np.uint8)
    if img.mode == "P" and "transparency" in img.info:
        return np.asarray(img.convert("RGBA").getchannel("A"), dtype=np.uint8)
    return None


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
