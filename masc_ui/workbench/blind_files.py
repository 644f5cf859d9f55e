"""The files a rater's browser receives, in the Rate tab and in Rate pairs alike: one rule, so that no file tells
methods or models apart by its metadata, its format or its name.

- Images (references, outputs, a video's poster frame, several references side by side, the "cannot be shown"
  picture): the pixels as the metrics see them (`imaging.open_image`: EXIF orientation applied, transparency
  flattened onto white, RGB, the first frame of an animation), re-encoded as PNG (`imaging.encode_png`) from the
  bare pixel array. The file holds the chunks IHDR, IDAT and IEND only (no text, EXIF, ICC profile or time chunk),
  whatever the stored file carried; every image of every task is such a PNG, at its decoded size, so an output
  stored as JPEG and one stored as PNG look alike on the wire.
- Videos: the stored stream's packets in a fresh container of the same kind (`imaging.without_metadata`: no
  container or stream tags, no other streams, no encoder settings inside the stream), every frame as stored. A
  video that cannot be rewritten so (a container other than MP4, WebM and Matroska) is never sent: `video` raises
  InputError and the task shows the "cannot be shown" picture instead (the rater flags or skips it).
- Names: an HMAC-SHA-256 of what the file is and the stored file's SHA-256, keyed with a random key drawn when the
  `BlindFiles` is made (new in every process), plus the suffix of the format. No name equals, or can be computed
  from, the stored file's SHA-256 or the served file's: a rater holding public benchmark files cannot look one up.

Each file is made once per stored file (decoded and encoded once) and handed out again from one folder
(`TaskFiles`), which the web app serves as it is (`launch.serve`).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from ..imaging import (
    DEFAULT_MAX_PIXELS,
    InputVideo,
    VideoLimits,
    encode_png,
    open_image,
    open_video,
    poster_frame,
    without_metadata,
)
from ..overlays import side_by_side

KEY_BYTES = 32
"""Length of the names' key (`BlindFiles`)."""
VIDEO_FILE_SUFFIXES = {
    "video/mp4": ".mp4",
    "video/webm": ".webm",
    "video/x-matroska": ".mkv",
    "video/x-msvideo": ".avi",
    "image/gif": ".gif",
    "video/mp2t": ".ts",
    "video/mpeg": ".mpg",
}
"""Suffix of a video's file by its media type (`imaging.open_video`), so the browser plays it."""


@dataclass(frozen=True)
class BlindVideo:
    """The files of a video output for a rater: its poster (first) frame and the clip to play."""

    poster: Path
    """PNG of the first frame (what shows before playback, and what stands for the clip in a picture)."""
    clip: Path
    """The clip without its metadata (see the module docstring)."""
    media_type: str
    """Media type of `clip`, e.g. `video/mp4`."""


class BlindFiles:
    """The files handed to raters (see the module docstring) for the stored files `read(sha256)` returns, written in
    `folder` (a temporary folder when None). Images over `max_pixels` and videos outside `video_limits` (default
    `VideoLimits()`) are refused as when they were imported (InputError)."""

    def __init__(
        self,
        read: Callable[[str], bytes],
        folder: Path | None = None,
        *,
        max_pixels: int = DEFAULT_MAX_PIXELS,
        video_limits: VideoLimits | None = None,
    ) -> None:
        self._read = read
        self._files = TaskFiles(folder)
        self._max_pixels = max_pixels
        self._video_limits = video_limits if video_limits is not None else VideoLimits()
        self._key = secrets.token_bytes(KEY_BYTES)

    @property
    def folder(self) -> Path:
        """Where the files are written."""
        return self._files.folder

    def image(self, sha: str, *, name: str) -> Path:
        """The PNG of stored image `sha`'s pixels (`name`: what the rater's messages call it, e.g. `reference 1`)."""
        return self._files.file(self._name("image", sha), lambda: _png(self._pixels(sha, name)), suffix=".png")

    def side_by_side(self, shas: Sequence[str], *, name: str) -> Path:
        """One PNG of stored images `shas` in a row (`overlays.side_by_side`); the image's own file when there is
        one. `name` is what they are called together (e.g. `reference`; each is `<name> <i>`)."""
        if len(shas) == 1:
            return self.image(shas[0], name=f"{name} 1")

        def make() -> bytes:
            return _png(side_by_side([self._pixels(sha, f"{name} {i + 1}") for i, sha in enumerate(shas)]))

        return self._files.file(self._name("side by side", *shas), make, suffix=".png")

    def video(self, sha: str, media_type: str, *, name: str) -> BlindVideo:
        """The poster and the clip of stored video `sha` (stored as `media_type`); the video is decoded only when one
        of them is made. Raises InputError when the video cannot be decoded or rewritten without its metadata."""
        opened: list[InputVideo] = []

        def video() -> InputVideo:
            if not opened:
                opened.append(open_video(self._read(sha), name=name, limits=self._video_limits))
            return opened[0]

        poster = self._files.file(self._name("poster", sha), lambda: _png(poster_frame(video()).pixels), suffix=".png")
        clip = self._files.file(
            self._name("video", sha),
            lambda: without_metadata(video()),
            suffix=VIDEO_FILE_SUFFIXES.get(media_type, ".mp4"),
        )
        return BlindVideo(poster, clip, media_type)

    def picture(self, what: str, draw: Callable[[], Image.Image]) -> Path:
        """The PNG of a picture the app draws (e.g. `what`="unshowable"), made once."""
        return self._files.file(self._name("picture", what), lambda: _png(draw()), suffix=".png")

    def _pixels(self, sha: str, name: str) -> Image.Image:
        return open_image(self._read(sha), name=name, max_pixels=self._max_pixels).pixels

    def _name(self, what: str, *parts: str) -> str:
        return hmac.new(self._key, "\0".join((what, *parts)).encode(), hashlib.sha256).hexdigest()


def _png(pixels: Image.Image) -> bytes:
    """PNG of `pixels`' RGB values alone: a new image of the bare array, so nothing of a decoded file's info (ICC
    profile, EXIF, text) reaches the encoder."""
    return encode_png(Image.fromarray(np.asarray(pixels.convert("RGB"))))


class TaskFiles:
    """A folder of files handed to browsers: one file per name, made by `make()` the first time only, written
    atomically (a file being sent is never rewritten). Beyond `MAX_FILES` files the least recently handed out half
    is deleted, except files handed out in the last `MIN_AGE_S` (a browser may still be fetching them)."""

    MAX_FILES = 2000
    MIN_AGE_S = 300.0

    def __init__(self, folder: Path | None = None) -> None:
        self._owned = None if folder is not None else tempfile.TemporaryDirectory(prefix="masc-task-files-")
        self.folder = Path(folder) if folder is not None else Path(self._owned.name)  # type: ignore[union-attr]
        self.folder.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._written: OrderedDict[str, tuple[Path, float]] = OrderedDict()
        """name -> (file, when it was last handed out), the least recently handed out first."""

    def file(self, name: str, make: Callable[[], bytes], *, suffix: str) -> Path:
        """The file `<name><suffix>` holding `make()`'s bytes, made the first time only (and again when it was
        deleted behind this object's back)."""
        with self._lock:
            found = self._written.get(name)
            if found is not None:
                self._written[name] = (found[0], time.time())
                self._written.move_to_end(name)
        if found is not None and found[0].exists():
            return found[0]
        data = make()
        tmp = self.folder / f".tmp-{secrets.token_hex(12)}"
        path = self.folder / f"{name}{suffix}"
        try:
            with open(tmp, "xb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        with self._lock:
            self._written[name] = (path, time.time())
            self._written.move_to_end(name)
            if len(self._written) > self.MAX_FILES:
                self._prune()
        return path

    def _prune(self) -> None:
        """Delete (and forget) the least recently handed out half of the files, keeping any handed out in the
        last `MIN_AGE_S`."""
        cutoff = time.time() - self.MIN_AGE_S
        for name, (path, handed_out) in list(self._written.items())[: len(self._written) // 2]:
            if handed_out >= cutoff:
                break  # the rest were handed out later still
            path.unlink(missing_ok=True)
            del self._written[name]
