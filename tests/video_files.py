"""Real video files for the tests, encoded with PyAV (the library the workbench decodes with).

`synthetic_frames` draws a moving square and writes the frame number in binary as a row of black/white 8x8 blocks,
so a decoded frame can be matched to the frame it came from despite lossy compression (`frame_number`).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path

import numpy as np
from PIL import Image

CODECS = {"mp4": "libx264", "webm": "libvpx-vp9"}


def encode_video(
    frames: Sequence[np.ndarray | Image.Image],
    container: str = "mp4",
    *,
    fps: int = 24,
    codec: str | None = None,
    metadata: dict[str, str] | None = None,
    start_s: float = 0.0,
) -> bytes:
    """Encode RGB frames (all the same even size) into an MP4 (H.264) or WebM (VP9) file's bytes, with the container
    tags `metadata` (e.g. a title); the first frame's timestamp is `start_s` seconds (as a cut from a longer
    recording has it)."""
    import av

    arrays = [np.asarray(f.convert("RGB") if isinstance(f, Image.Image) else f, dtype=np.uint8) for f in frames]
    height, width = arrays[0].shape[:2]
    buf = io.BytesIO()
    with av.open(buf, mode="w", format=container) as out:
        out.metadata.update(metadata or {})
        stream = out.add_stream(codec or CODECS[container], rate=fps)
        stream.width, stream.height, stream.pix_fmt = width, height, "yuv420p"
        if stream.codec_context.name == "libx264":
            stream.options = {"crf": "12", "preset": "ultrafast"}
        first = round(start_s * fps)
        for i, arr in enumerate(arrays):
            frame = av.VideoFrame.from_ndarray(arr, format="rgb24")
            frame.pts, frame.time_base = first + i, Fraction(1, fps)
            for packet in stream.encode(frame):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    return buf.getvalue()


BITS = 10


def synthetic_frames(n: int, width: int = 96, height: int = 64) -> list[np.ndarray]:
    """`n` (< 1024) frames: grey background, a square moving right, the frame number in binary along the top
    (bit k = block k, white = 1); `width` >= 8 * BITS."""
    frames = []
    for i in range(n):
        arr = np.full((height, width, 3), 96, np.uint8)
        x = (i * 3) % (width - 16)
        arr[20:36, x : x + 16] = (30, 200, 60)
        for bit in range(BITS):
            arr[:8, 8 * bit : 8 * bit + 8] = 255 if (i >> bit) & 1 else 0
        frames.append(arr)
    return frames


def frame_number(image: Image.Image) -> int:
    """The frame number `synthetic_frames` wrote along the top of `image`."""
    arr = np.asarray(image.convert("L"), np.float32)
    return sum(1 << bit for bit in range(BITS) if arr[2:6, 8 * bit + 2 : 8 * bit + 6].mean() > 128)


def dreambooth_frames(shared_data: Path, subject: str = "cat", size: tuple[int, int] = (128, 96)) -> list[Image.Image]:
    """The DreamBooth photos of `subject`, resized to `size` (even sides, as yuv420p needs)."""
    folder = shared_data / "dreambooth" / "dataset" / subject
    return [Image.open(p).convert("RGB").resize(size) for p in sorted(folder.glob("*.jpg"))]
