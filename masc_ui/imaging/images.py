"""User images: any format Pillow reads, EXIF orientation applied, transparency flattened onto white, converted to
RGB, decoded once into an `InputImage` that carries its content hash. Refused with a clear `InputError`: files that
are not images, truncated files, images over `max_pixels` (decompression bombs), and empty (0-pixel) images.
"""

from __future__ import annotations

import hashlib
import io
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps, UnidentifiedImageError

from ..errors import InputError
from .files import read_file_bytes

ImageSource = str | Path | bytes | Image.Image | np.ndarray

DEFAULT_MAX_PIXELS = 40_000_000


def load_image(src: ImageSource, *, name: str = "image", max_pixels: int = DEFAULT_MAX_PIXELS) -> Image.Image:
    """Open `src` (path, bytes, PIL image, or HxWx3/HxW uint8 array) as an RGB PIL image, EXIF-rotated.

    Raises `InputError` naming `name` for missing/unreadable/truncated/huge/empty images.
    """
    if isinstance(src, np.ndarray):
        return from_array(src, name)
    if isinstance(src, Image.Image):
        img = src
        check_size(img.size, name, max_pixels)
    else:
        img = open_pil(src, name, max_pixels)
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


def open_image(
    src: ImageSource | InputImage, *, name: str = "image", max_pixels: int = DEFAULT_MAX_PIXELS
) -> InputImage:
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
        raw, label = read_file_bytes(src, name)
        source = decode_image(raw, label, max_pixels)
        fmt = source.format
    notes = []
    if isinstance(source, Image.Image) and has_transparency(source):
        notes.append(f"{name} has transparency: it was flattened onto white (what metrics and raters see)")
    pixels = load_image(source, name=name, max_pixels=max_pixels)
    if raw is not None and fmt in KEPT_FORMATS:
        data, media_type = raw, KEPT_FORMATS[fmt]
    else:
        data, media_type = encode_png(pixels), "image/png"
    return InputImage(
        pixels=pixels,
        data=data,
        media_type=media_type,
        sha256=hashlib.sha256(data).hexdigest(),
        name=name,
        notes=tuple(notes),
    )


def as_input_image(
    src: ImageSource | InputImage, *, name: str = "image", max_pixels: int = DEFAULT_MAX_PIXELS
) -> InputImage:
    """`src` itself when it already is an `InputImage`, else `open_image(src)`: the library entry points
    (which accept PIL images and arrays) call this, so images decoded at the edge are never decoded again."""
    return open_image(src, name=name, max_pixels=max_pixels)


def encode_png(img: Image.Image) -> bytes:
    """Lossless PNG bytes of `img` with no metadata and a fixed compression level, so the same pixels always
    give the same bytes (and so the same content hash)."""
    buf = io.BytesIO()
    img.save(buf, format="PNG", compress_level=1)
    return buf.getvalue()


def natural_frame_jpeg(image: InputImage | Image.Image, *, long_side: int = 512, quality: int = 95) -> bytes:
    """A frame as NaturalScore's judge sees it (OpenS2V `get_naturalscore.py`): resized so that its long side is
    `long_side` px (the other side `int(side * long_side / long)`, as there), area-averaged when shrinking (Pillow's
    BOX filter, OpenCV INTER_AREA's equivalent) and bilinear when enlarging, then JPEG at `quality` (OpenCV's
    default 95) with 4:2:0 chroma subsampling."""
    pixels = image.pixels if isinstance(image, InputImage) else image.convert("RGB")
    w, h = pixels.size
    if h >= w:
        size = (int(w * long_side / h), long_side)
    else:
        size = (long_side, int(h * long_side / w))
    size = (max(size[0], 1), max(size[1], 1))
    resample = Image.Resampling.BOX if max(w, h) > long_side else Image.Resampling.BILINEAR
    resized = pixels.resize(size, resample) if size != (w, h) else pixels
    buf = io.BytesIO()
    resized.save(buf, format="JPEG", quality=quality, subsampling="4:2:0")
    return buf.getvalue()


IMAGE_HEAD_BYTES = 256 * 1024
"""Bytes of a file's start that `image_format` needs at most (a JPEG's EXIF block may hold up to 64 KiB)."""


def image_format(head: bytes) -> str | None:
    """The format Pillow recognises in the first bytes of a file (`PNG`, `JPEG`, `GIF`, ...: its header, which for a
    JPEG with a large EXIF block may take `IMAGE_HEAD_BYTES`), None when it recognises none. Nothing is decoded."""
    try:
        with Image.open(io.BytesIO(head)) as img:
            return img.format
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, Image.DecompressionBombError):
        return None


def has_transparency(img: Image.Image) -> bool:
    if img.mode in ("RGBA", "LA", "PA") or (img.mode == "P" and "transparency" in img.info):
        alpha = alpha_channel(img)
        return alpha is not None and int(alpha.min()) < 255
    return False


def open_pil(src: str | Path | bytes, name: str, max_pixels: int) -> Image.Image:
    data, label = read_file_bytes(src, name)
    return decode_image(data, label, max_pixels)


def decode_image(data: bytes, label: str, max_pixels: int) -> Image.Image:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            img = Image.open(io.BytesIO(data))
            check_size(img.size, label, max_pixels)
            img.load()
    except InputError:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise InputError(
            f"{label}: the image is too large to open safely; downscale it below {max_pixels:,} pixels"
        ) from None
    except UnidentifiedImageError:
        raise InputError(f"{label}: not an image Pillow can read; upload a PNG, JPEG or WebP file") from None
    except (OSError, SyntaxError, ValueError) as exc:
        raise InputError(
            f"{label}: the image data is damaged or truncated ({exc}); re-export or re-upload it"
        ) from None
    return img


def check_size(size: tuple[int, int], label: str, max_pixels: int) -> None:
    w, h = size
    if w <= 0 or h <= 0:
        raise InputError(f"{label}: the image has no pixels ({w}x{h})")
    if w * h > max_pixels:
        raise InputError(f"{label}: {w}x{h} = {w * h:,} pixels is over the limit of {max_pixels:,}; downscale it first")


def from_array(arr: np.ndarray, name: str) -> Image.Image:
    if arr.ndim == 2:
        arr = np.stack([arr] * 3, axis=-1)
    if arr.ndim != 3 or arr.shape[2] not in (3, 4) or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise InputError(f"{name}: an image array must be HxWx3 (RGB) or HxW, got shape {arr.shape}")
    if arr.dtype != np.uint8:
        if np.issubdtype(arr.dtype, np.floating) and arr.size and 0.0 <= float(arr.min()) and float(arr.max()) <= 1.0:
            arr = (arr * 255.0).round()
        arr = np.clip(arr, 0, 255).astype(np.uint8)
    return Image.fromarray(np.ascontiguousarray(arr[..., :3]), mode="RGB")


def alpha_channel(img: Image.Image) -> np.ndarray | None:
    if img.mode in ("RGBA", "LA", "PA"):
        return np.asarray(img.getchannel("A"), dtype=np.uint8)
    if img.mode == "P" and "transparency" in img.info:
        return np.asarray(img.convert("RGBA").getchannel("A"), dtype=np.uint8)
    return None
