"""Files whose metadata names the method that made them (what a rater must never receive), and readers of what a
served file holds: PNG chunk types, container tags.

`png_with_text`: an RGBA PNG (half transparent) with a tEXt `parameters` chunk ("Model: method-B-sdxl-dreambooth"),
zTXt, iTXt, tIME and eXIf chunks and an ICC profile; `jpeg_with_exif`: a JPEG whose EXIF says Software "method-A
generator" and Orientation 6 (rotate 90 degrees to show), with a comment "method-A"; `mp4_with_tags`: an H.264 MP4
with the container tags title "made by method-A" and comment "method-A" (and x264's settings string in its stream).
"""

from __future__ import annotations

import hashlib
import io
import struct
from pathlib import Path

import numpy as np
from PIL import Image, ImageCms, PngImagePlugin

from tests.video_files import encode_video, synthetic_frames

MARKERS = (b"method-A", b"method-B", b"sdxl-dreambooth", b"made by", b"parameters", b"x264")
"""Strings of the marked files' metadata; none may be in a file a rater receives."""
PIXEL_CHUNKS = {b"IHDR", b"PLTE", b"IDAT", b"IEND"}
"""The PNG chunks that carry pixels (and nothing else)."""


def png_with_text(seed: int = 0, size: tuple[int, int] = (64, 40)) -> bytes:
    """An RGBA PNG whose text, time and EXIF chunks name `method-B-sdxl-dreambooth`."""
    rng = np.random.default_rng(seed)
    pixels = rng.integers(0, 256, (size[1], size[0], 4), dtype=np.uint8)
    pixels[..., 3] = np.where(np.arange(size[0]) < size[0] // 2, 255, 90)[None, :]  # the right half see-through
    info = PngImagePlugin.PngInfo()
    info.add_text("parameters", "Steps: 30, Model: method-B-sdxl-dreambooth, Seed: 7")
    info.add_text("Comment", "made by method-B", zip=True)
    info.add_itxt("Description", "method-B-sdxl-dreambooth output", lang="en")
    info.add(b"tIME", struct.pack(">HBBBBB", 2024, 5, 17, 12, 0, 0))
    exif = Image.Exif()
    exif[0x0131] = "method-B generator"
    icc = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    buffer = io.BytesIO()
    Image.fromarray(pixels, "RGBA").save(buffer, format="PNG", pnginfo=info, exif=exif.tobytes(), icc_profile=icc)
    data = buffer.getvalue()
    assert {b"tEXt", b"zTXt", b"iTXt", b"tIME", b"eXIf", b"iCCP"} <= set(png_chunks(data))
    return data


def jpeg_with_exif(seed: int = 0, size: tuple[int, int] = (64, 48)) -> bytes:
    """A JPEG whose EXIF Software tag is "method-A generator" (Orientation 6: shown rotated) and comment "method-A"."""
    pixels = np.random.default_rng(seed).integers(0, 256, (size[1], size[0], 3), dtype=np.uint8)
    exif = Image.Exif()
    exif[0x0131] = "method-A generator"
    exif[0x0112] = 6
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, format="JPEG", quality=95, exif=exif.tobytes(), comment=b"method-A")
    return buffer.getvalue()


def mp4_with_tags(frames: int = 8, method: str = "method-A", width: int = 96, height: int = 64) -> bytes:
    """An H.264 MP4 with the container tags title "made by <method>" and comment "<method>"."""
    return encode_video(
        synthetic_frames(frames, width, height), "mp4", metadata={"title": f"made by {method}", "comment": method}
    )


def png_chunks(data: bytes) -> list[bytes]:
    """The chunk types of a PNG file, in order."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", data[:8]
    types, at = [], 8
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at : at + 8])
        types.append(kind)
        at += 12 + length
    return types


def container_tags(data: bytes) -> dict[str, str]:
    """The container's and the first video stream's tags of a video file."""
    import av

    with av.open(io.BytesIO(data)) as container:
        return {**container.metadata, **container.streams.video[0].metadata}


def assert_blind_image(path: Path, stored: bytes, stored_sha: str) -> None:
    """`path` (a file a rater receives) is a PNG of the pixels the metrics see of `stored` (`imaging.open_image`),
    holding only pixel chunks and none of `MARKERS`, named neither by the stored file's SHA-256 nor the served one's."""
    assert path.suffix == ".png", path.name
    assert_blind_png(path.read_bytes(), path.name, stored, stored_sha)


def assert_blind_png(served: bytes, name: str, stored: bytes, stored_sha: str) -> None:
    """`assert_blind_image` of the bytes `served` under the file name `name`."""
    from masc_ui.imaging import open_image

    assert set(png_chunks(served)) <= PIXEL_CHUNKS, (name, png_chunks(served))
    assert not [m for m in MARKERS if m in served]
    assert stored_sha not in name and hashlib.sha256(served).hexdigest() not in name
    assert hashlib.sha256(stored).hexdigest() == stored_sha
    with Image.open(io.BytesIO(served)) as shown:
        assert shown.mode == "RGB" and not shown.info.get("exif") and not shown.getexif()
        assert np.array_equal(np.asarray(shown), np.asarray(open_image(stored).pixels))
