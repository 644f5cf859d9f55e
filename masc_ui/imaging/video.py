"""Videos (subject-to-video, METRICS.md "Subject-to-video").

Videos (subject-to-video, METRICS.md "Subject-to-video")

A video is decoded with PyAV (FFmpeg's libraries, shipped inside the PyPI wheel: no system ffmpeg). `open_video`
reads the file once, checks the limits and decodes every frame once to count them exactly (a frame count read from
container metadata is missing for WebM and wrong for damaged files). Frames are then read back by index, in
presentation order: `read_frames` in the calling thread, or `iter_frames`, which decodes in a background thread
while the caller scores the frames already delivered. Each frame is an `InputImage` (a lossless PNG of its RGB
pixels; its `sha256` keys every embedding cache, so a frame that two metrics read is encoded once per backbone).

Sampling rules (`FrameRule`):
- `linspace`: `numpy.linspace(0, T - 1, n, dtype=int)` over the T decoded frames, first and last included; the
  integer cast truncates toward zero, exactly as OpenS2V's `sample_video_frames` (decord) does. When T < n some
  frames repeat (OpenS2V keeps the repeats, so they weigh in the means).
- `stride` (NaturalScore): frame `i * max(T // n, 1)` for i = 0 .. n - 1, dropping indices >= T, as OpenS2V's
  `extract_frames` (OpenCV) does; the last frames of the clip are never shown to the judge.
- `all` (Motion): every decoded frame once, in order (`ALL_FRAMES`; its `count` is not used).
RGB conversion is FFmpeg's swscale (`to_ndarray("rgb24")`), the conversion decord and OpenCV also use.
"""

from __future__ import annotations

import hashlib
import io
import queue as _queue
import re
import tempfile as _tempfile
import threading as _threading
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

import numpy as np
from PIL import Image

from ..errors import InputError
from .files import bytes_text, read_file_bytes
from .images import DEFAULT_MAX_PIXELS, InputImage, open_image

VIDEO_RULES = ("linspace", "stride", "all")

_VIDEO_MEDIA_TYPES = {
    "mov,mp4,m4a,3gp,3g2,mj2": "video/mp4",
    "matroska,webm": "video/webm",
    "avi": "video/x-msvideo",
    "gif": "image/gif",
    "mpegts": "video/mp2t",
    "mpeg": "video/mpeg",
}

_STILL_IMAGE_BRANDS = (b"heic", b"heix", b"heim", b"heis", b"mif1", b"msf1", b"avif", b"avis")
"""`ftyp` brands of HEIF/AVIF still images (ISO base media files that are not videos)."""

_TRUNCATION_SLACK_FRAMES = 2
"""A stream may end up to this many frame periods before its declared duration (rounding in muxers); more is
reported as truncation."""


@dataclass(frozen=True)
class VideoLimits:
    """What `open_video` accepts. Build from the settings with `VideoLimits.from_settings(settings)`."""

    max_bytes: int = 256 * 1024 * 1024
    """Largest file, in bytes (`Settings.max_video_mb`)."""
    max_seconds: float = 120.0
    """Longest duration, in seconds (`Settings.max_video_seconds`)."""
    max_frames: int = 10_000
    """Most decoded frames (`Settings.max_video_frames`)."""
    max_pixels: int = 3840 * 2160
    """Largest frame, width x height (`Settings.max_video_pixels`)."""

    @classmethod
    def from_settings(cls, settings: object) -> VideoLimits:
        """The limits of a `masc_ui.settings.Settings` (read by attribute, so imaging does not import settings)."""
        return cls(
            max_bytes=int(settings.max_video_mb) * 1024 * 1024,
            max_seconds=float(settings.max_video_seconds),
            max_frames=int(settings.max_video_frames),
            max_pixels=int(settings.max_video_pixels),
        )


@dataclass(frozen=True, eq=False)
class InputVideo:
    """A user video read once at the edge: its bytes, the one content hash, and what decoding it found. Build it
    with `open_video`; frames are read with `read_frames` / `iter_frames`. Identity is the content hash."""

    data: bytes
    """The file as uploaded (stored as is)."""
    media_type: str
    """MIME type from the container, e.g. `video/mp4`, `video/webm` (`application/octet-stream` when unknown)."""
    sha256: str
    """SHA-256 (64 lowercase hex digits) of `data`: the video's identity in caches and in storage."""
    frame_count: int
    """T, the number of frames the decoder produces (>= 1)."""
    fps: float
    """Frames per second: the stream's average rate, else T / duration."""
    duration_s: float
    """Seconds from the first frame's start to the last frame's end."""
    size: tuple[int, int]
    """(width, height) of the frames, in pixels."""
    codec: str
    """Video codec name as FFmpeg calls it, e.g. `h264`, `vp9`."""
    name: str = "video"
    """What the user calls it (for messages)."""
    notes: tuple[str, ...] = ()
    frame_times_s: tuple[float, ...] = ()
    """Presentation time of each decoded frame in seconds from the first frame (the first is 0.0, whatever
    timestamp the file starts at): the one time base of every time shown for the video (`time_of`)."""

    def time_of(self, index: int) -> float:
        """Seconds from the first frame to frame `index` (0-based): its presentation time, else `index / fps`."""
        if 0 <= index < len(self.frame_times_s):
            return self.frame_times_s[index]
        return index / self.fps if self.fps else 0.0

    def __eq__(self, other: object) -> bool:
        return isinstance(other, InputVideo) and other.sha256 == self.sha256

    def __hash__(self) -> int:
        return hash(self.sha256)

    def __repr__(self) -> str:
        return (
            f"InputVideo({self.name!r}, {self.size[0]}x{self.size[1]}, {self.frame_count} frames, "
            f"{self.fps:.3g} fps, {self.codec}, sha256={self.sha256[:12]})"
        )


class FrameSampling(TypedDict):
    """The sampling of one video under a `FrameRule` (JSON-able: extras and provenance record it)."""

    rule: str
    count: int
    frame_count: int
    """T, the video's frame count."""
    indices: list[int]
    """The 0-based frame indices read, in order."""


@dataclass(frozen=True)
class FrameRule:
    """Which frames of a video a metric reads (see the module's video section for the two rules)."""

    kind: str
    """`linspace` (evenly spaced, first and last included), `stride` (`i * (T // count)`) or `all` (every frame)."""
    count: int
    """How many frames (n); not used by `all`."""

    def __post_init__(self) -> None:
        if self.kind not in VIDEO_RULES:
            raise InputError(f"frame rule must be one of {VIDEO_RULES}, got {self.kind!r}")
        if isinstance(self.count, bool) or not isinstance(self.count, int) or self.count < 1:
            raise InputError(f"frame count of a frame rule must be an integer >= 1, got {self.count!r}")

    def indices(self, frame_count: int) -> list[int]:
        """The 0-based frame indices (non-decreasing) to read from a video of `frame_count` frames."""
        if self.kind == "linspace":
            return linspace_indices(frame_count, self.count)
        if self.kind == "all":
            _check_counts(frame_count, 1)
            return list(range(frame_count))
        return stride_indices(frame_count, self.count)

    def describe(self, frame_count: int) -> FrameSampling:
        """JSON-able record of the sampling (for provenance/extras): rule, count (for `all`: T), T and the
        indices."""
        return {
            "rule": self.kind,
            "count": frame_count if self.kind == "all" else self.count,
            "frame_count": frame_count,
            "indices": self.indices(frame_count),
        }


ALL_FRAMES = FrameRule("all", 1)
"""Every decoded frame (Motion reads them all, as OpenS2V's `get_motionscore.py`)."""


def linspace_indices(frame_count: int, count: int) -> list[int]:
    """`numpy.linspace(0, frame_count - 1, count, dtype=int)`: `count` indices, first and last frame included,
    truncated toward zero like OpenS2V's sampler (repeats when `frame_count < count`)."""
    _check_counts(frame_count, count)
    return [int(i) for i in np.linspace(0, frame_count - 1, count, dtype=int)]


def stride_indices(frame_count: int, count: int) -> list[int]:
    """OpenS2V NaturalScore's rule: `i * max(frame_count // count, 1)` for i < count, indices past the end dropped
    (so a clip shorter than `count` frames gives all its frames once)."""
    _check_counts(frame_count, count)
    step = max(frame_count // count, 1)
    return [i * step for i in range(count) if i * step < frame_count]


def _check_counts(frame_count: int, count: int) -> None:
    if frame_count < 1:
        raise InputError(f"a video needs at least one frame to sample from, got frame_count={frame_count}")
    if count < 1:
        raise InputError(f"the number of frames to sample must be >= 1, got {count}")


@dataclass(frozen=True)
class VideoFrame:
    """One decoded frame of a video."""

    index: int
    """0-based position among the decoded frames (presentation order)."""
    time_s: float
    """Seconds from the video's first frame (`InputVideo.time_of`): the time shown for it everywhere."""
    image: InputImage
    """Its RGB pixels as an `InputImage` named `<video name> frame <index>`."""


def open_video(
    src: str | Path | bytes | InputVideo, *, name: str = "video", limits: VideoLimits = VideoLimits()
) -> InputVideo:
    """Read and validate a video file (path or bytes) once; an `InputVideo` is returned as it is.

    Decodes every frame once (no RGB conversion) to count them. Raises `InputError` naming `name` for: a missing or
    empty file, a file over `limits.max_bytes`, data FFmpeg cannot read, no video stream, frames larger than
    `limits.max_pixels`, more than `limits.max_frames` frames, a duration over `limits.max_seconds`, no decodable
    frame, and damaged or truncated streams (a decoding error, or frames ending well before the declared end).
    """
    if isinstance(src, InputVideo):
        return src
    if isinstance(src, (str, Path)) and Path(src).is_dir():
        raise InputError(f"{name}: {src} is a folder, not a video file")
    if isinstance(src, (str, Path)) and Path(src).is_file() and Path(src).stat().st_size > limits.max_bytes:
        raise InputError(
            f"{name} ({Path(src).name}): the file is {bytes_text(Path(src).stat().st_size)}, over "
            f"the limit of {bytes_text(limits.max_bytes)} (MASC_MAX_VIDEO_MB); shorten or re-encode it"
        )
    data, label = read_file_bytes(src, name, max(limits.max_bytes, 1))
    if len(data) > limits.max_bytes:
        raise InputError(
            f"{label}: the file is {bytes_text(len(data))}, over the limit of "
            f"{bytes_text(limits.max_bytes)} (MASC_MAX_VIDEO_MB); shorten or re-encode it"
        )
    av = _pyav()
    try:
        container = av.open(io.BytesIO(data), mode="r")
    except (av.FFmpegError, EOFError, OSError, ValueError) as exc:
        raise InputError(
            f"{label}: not a video FFmpeg can read ({ffmpeg_reason(exc)}): the file is not a video, or it is "
            "damaged or truncated; upload an MP4 (H.264) or WebM (VP9) file"
        ) from None
    with container:
        if not container.streams.video:
            raise InputError(
                f"{label}: the file holds no video stream (audio only, or not a single frame); upload a video"
            )
        stream = container.streams.video[0]
        width, height = int(stream.codec_context.width or 0), int(stream.codec_context.height or 0)
        if width <= 0 or height <= 0:
            raise InputError(f"{label}: the video stream has no frame size ({width}x{height}); the file is damaged")
        if width * height > limits.max_pixels:
            raise InputError(
                f"{label}: frames of {width}x{height} = {width * height:,} pixels are over the limit of "
                f"{limits.max_pixels:,} (MASC_MAX_VIDEO_PIXELS); downscale the video"
            )
        declared = _declared_duration(container, stream)
        if declared is not None and declared > limits.max_seconds:
            raise InputError(
                f"{label}: the video lasts {declared:.1f} s, over the limit of {limits.max_seconds:g} s "
                "(MASC_MAX_VIDEO_SECONDS); cut it shorter"
            )
        rate = float(stream.average_rate) if stream.average_rate else 0.0
        count, first, last = 0, None, None
        times: list[float] = []
        for frame in _decode_video(container, stream, label):
            count += 1
            if count > limits.max_frames:
                raise InputError(
                    f"{label}: more than {limits.max_frames:,} frames, over the limit "
                    "(MASC_MAX_VIDEO_FRAMES); cut the video shorter or lower its frame rate"
                )
            time_s = _frame_time(frame, count - 1, rate)
            first = time_s if first is None else first
            last = time_s
            times.append(time_s - first)
        codec = stream.codec_context.name
        metadata_frames = int(stream.frames or 0)
        media_type = _video_media_type(container.format.name, codec)
    if count == 0:
        raise InputError(f"{label}: the video holds no decodable frame (empty, or damaged); re-export it")
    fps = rate if rate > 0 else (count - 1) / (last - first) if count > 1 and last > first else 1.0
    duration = (last - first) + 1.0 / fps
    if duration > limits.max_seconds:
        raise InputError(
            f"{label}: the video lasts {duration:.1f} s, over the limit of {limits.max_seconds:g} s "
            "(MASC_MAX_VIDEO_SECONDS); cut it shorter"
        )
    slack = _TRUNCATION_SLACK_FRAMES / fps
    # A container may declare its length from timestamp 0 (Matroska's Duration) rather than from the first frame:
    # the frames cover the declaration when either reading of it is met.
    covered = max(duration, last + 1.0 / fps)
    if (
        declared is not None and covered < declared - max(slack, 0.02 * declared)
    ) or metadata_frames > count + _TRUNCATION_SLACK_FRAMES:
        expected = f"{declared:.2f} s" if declared is not None else f"{metadata_frames} frames"
        raise InputError(
            f"{label}: the file looks truncated: its {count} frames last {duration:.2f} s but it "
            f"declares {expected}; re-export or re-upload the whole file"
        )
    return InputVideo(
        data=data,
        media_type=media_type,
        sha256=hashlib.sha256(data).hexdigest(),
        frame_count=count,
        fps=fps,
        duration_s=duration,
        size=(width, height),
        codec=codec,
        name=name,
        frame_times_s=tuple(times),
    )


def looks_like_video(head: bytes) -> bool:
    """True when the first bytes of a file are those of a video container: MP4/MOV/3GP (`ftyp` box at offset 4, or
    QuickTime's `moov`/`mdat`/`wide`/`free`; HEIF/AVIF still images, which use `ftyp` too, excluded), Matroska/WebM (EBML header), AVI (`RIFF....AVI `), FLV or Ogg. Image
    formats (GIF included: an animated GIF is read as its first image) are not videos."""
    head = bytes(head[:16])
    if head[4:8] == b"ftyp" and head[8:12] in _STILL_IMAGE_BRANDS:
        return False
    return (
        head[4:8] in (b"ftyp", b"moov", b"mdat", b"wide", b"free")
        or head[:4] == b"\x1a\x45\xdf\xa3"
        or (head[:4] == b"RIFF" and head[8:12] == b"AVI ")
        or head[:3] == b"FLV"
        or head[:4] == b"OggS"
    )


def open_media(
    src: str | Path | bytes | InputImage | InputVideo,
    *,
    name: str = "output",
    max_pixels: int = DEFAULT_MAX_PIXELS,
    limits: VideoLimits = VideoLimits(),
) -> InputImage | InputVideo:
    """An image or a video, told apart by the file's first bytes (`looks_like_video`): `open_video(src, limits)` for a
    video, `open_image(src, max_pixels)` otherwise (PIL images and arrays are images). Decoded inputs are returned as
    they are. Errors are those of `open_image` / `open_video`, naming `name`."""
    if isinstance(src, (InputImage, InputVideo)):
        return src
    if isinstance(src, (str, Path)):
        path = Path(src)
        if path.is_file():
            with path.open("rb") as fh:
                head = fh.read(16)
            if looks_like_video(head):
                return open_video(path, name=name, limits=limits)
    elif isinstance(src, (bytes, bytearray)) and looks_like_video(src):
        return open_video(bytes(src), name=name, limits=limits)
    return open_image(src, name=name, max_pixels=max_pixels)


def poster_frame(video: InputVideo) -> InputImage:
    """The frame that stands for a video in lists and in the rater's view before playback: its first frame (index 0,
    what a browser shows before a video plays), as an `InputImage`."""
    return read_frames(video, [0])[0].image


_REMUX_FORMATS = {
    "video/mp4": ("mp4", {"movflags": "+faststart"}),
    "video/webm": ("webm", {}),
    "video/x-matroska": ("matroska", {}),
}
"""Media type -> (FFmpeg muxer, its options) of the containers `without_metadata` rewrites."""
_USER_DATA_FILTERS = {
    "h264": "filter_units=remove_types=6",
    "hevc": "filter_units=remove_types=39|40",
    "av1": "filter_units=remove_types=5",
}
"""Codec -> the FFmpeg bitstream filter that drops its units holding no picture: H.264 / HEVC SEI messages (where an
encoder writes its name and settings, e.g. x264's "options: crf=..." string), AV1 metadata OBUs."""


def without_metadata(video: InputVideo) -> bytes:
    """The file of `video` rewritten without what it says besides the pictures: the first video stream's packets
    copied (no re-encoding: every frame is unchanged) into a fresh container of the same kind (`_REMUX_FORMATS`: MP4
    with its index first, so a browser plays it before the download ends; WebM; Matroska). The container's and the
    stream's tags (title, comment, encoder, creation time...) are not copied, and neither are other streams (audio,
    subtitles, attachments); inside an H.264, HEVC or AV1 stream the units that carry no picture (SEI messages,
    metadata OBUs: an encoder's name and settings) are dropped (`_USER_DATA_FILTERS`). Raises InputError for another
    container kind, or when FFmpeg cannot rewrite the file."""
    if video.media_type not in _REMUX_FORMATS:
        raise InputError(
            f"{video.name}: a {video.media_type} file cannot be rewritten without its metadata "
            f"(only {', '.join(_REMUX_FORMATS)})"
        )
    av = _pyav()
    muxer, options = _REMUX_FORMATS[video.media_type]
    with _tempfile.TemporaryDirectory(prefix="masc-remux-") as folder:
        path = Path(folder) / "video"  # a file, not a buffer: MP4's index-first pass reopens what it wrote
        try:
            with (
                av.open(io.BytesIO(video.data), mode="r") as source,
                av.open(str(path), mode="w", format=muxer, options=options) as target,
            ):
                stream = source.streams.video[0]
                copy = target.add_stream_from_template(stream)
                units = _USER_DATA_FILTERS.get(stream.codec_context.name)
                drop = None if units is None else av.bitstream.BitStreamFilterContext(units, stream, copy)
                for packet in source.demux(stream):
                    if packet.dts is None:  # the demuxer's empty packet at the end
                        continue
                    for kept in [packet] if drop is None else drop.filter(packet):
                        kept.stream = copy
                        target.mux(kept)
                for kept in [] if drop is None else drop.filter(None):
                    kept.stream = copy
                    target.mux(kept)
        except (av.FFmpegError, EOFError, OSError, ValueError, IndexError) as exc:
            raise InputError(f"{video.name}: the video could not be rewritten without its metadata ({exc})") from None
        return path.read_bytes()


def read_frames(video: InputVideo, indices: Sequence[int]) -> list[VideoFrame]:
    """The frames at `indices` (non-decreasing; repeats give the same frame again), decoded in this thread."""
    return list(_sampled_frames(video, _check_indices(video, indices), threading_event=None))


def iter_frames(video: InputVideo, indices: Sequence[int], *, prefetch: int = 4) -> Generator[VideoFrame, None, None]:
    """Like `read_frames`, but a background thread decodes (and PNG-encodes and hashes) up to `prefetch` frames ahead
    while the caller works on the ones it has: decoding overlaps scoring. Closing the iterator early stops the
    thread; a decoding error is raised in the caller at the frame where it happened."""
    wanted = _check_indices(video, indices)
    if prefetch < 1:
        raise InputError(f"prefetch must be >= 1, got {prefetch}")
    return _prefetched(video, wanted, prefetch)


def _pyav():
    try:
        import av
    except ImportError:  # pragma: no cover - av is a pinned runtime dependency
        raise InputError("video support needs PyAV: pip install -r requirements.txt") from None
    return av


def _declared_duration(container, stream) -> float | None:
    """Seconds the video stream (or, for a container holding only video, the container) says it lasts."""
    if stream.duration and stream.time_base:
        return float(stream.duration * stream.time_base)
    only_video = all(s.type == "video" for s in container.streams)
    if only_video and container.duration:
        return container.duration / 1_000_000
    return None


def ffmpeg_reason(exc: BaseException) -> str:
    """What FFmpeg said about a file, in words: its message without the error number and the file name PyAV add
    (`[Errno 1094995529] Invalid data found when processing input: '<none>'` -> `invalid data found when processing
    input`)."""
    text = getattr(exc, "strerror", None) or (exc.args[1] if len(exc.args) > 1 else None) or str(exc)
    text = re.sub(r"^\[Errno -?\d+\]\s*", "", str(text)).split(": '")[0].strip().rstrip(".:")
    return (text[:1].lower() + text[1:]) if text else type(exc).__name__


def _frame_time(frame, position: int, rate: float) -> float:
    """A decoded frame's presentation timestamp in seconds, as the file has it (`open_video` makes times relative to
    the first frame)."""
    if frame.pts is not None and frame.time_base is not None:
        return float(frame.pts * frame.time_base)
    return position / rate if rate > 0 else float(position)


def _decode_video(container, stream, label: str):
    """The decoded frames of `stream` in presentation order; FFmpeg errors become `InputError` naming the frame."""
    av = _pyav()
    stream.thread_type = "AUTO"
    position = 0
    iterator = container.decode(stream)
    while True:
        try:
            frame = next(iterator)
        except StopIteration:
            return
        except (av.FFmpegError, EOFError, OSError, ValueError) as exc:
            raise InputError(
                f"{label}: the video is damaged or truncated after frame {position} ({ffmpeg_reason(exc)}); "
                "re-export or re-upload it"
            ) from None
        position += 1
        yield frame


def _video_media_type(format_name: str, codec: str) -> str:
    media_type = _VIDEO_MEDIA_TYPES.get(format_name, "application/octet-stream")
    if media_type == "video/webm" and codec not in ("vp8", "vp9", "av1"):
        return "video/x-matroska"
    return media_type


def _check_indices(video: InputVideo, indices: Sequence[int]) -> list[int]:
    wanted = [int(i) for i in indices]
    if any(b < a for a, b in zip(wanted, wanted[1:])):
        raise InputError(f"{video.name}: frame indices must be non-decreasing, got {wanted}")
    if wanted and (wanted[0] < 0 or wanted[-1] >= video.frame_count):
        raise InputError(f"{video.name}: frame indices must lie in 0..{video.frame_count - 1}, got {wanted}")
    return wanted


def _sampled_frames(video: InputVideo, wanted: list[int], threading_event) -> Iterator[VideoFrame]:
    """Decode `video` from the start and yield a `VideoFrame` for each entry of `wanted` (sorted), stopping after
    the last one, or as soon as `threading_event` (if any) is set."""
    if not wanted:
        return
    av = _pyav()
    label = f"{video.name}"
    container = av.open(io.BytesIO(video.data), mode="r")
    with container:
        stream = container.streams.video[0]
        k = 0
        for position, frame in enumerate(_decode_video(container, stream, label)):
            if threading_event is not None and threading_event.is_set():
                return
            if position != wanted[k]:
                continue
            pixels = Image.fromarray(frame.to_ndarray(format="rgb24"), mode="RGB")
            item = VideoFrame(
                index=position,
                time_s=video.time_of(position),
                image=open_image(pixels, name=f"{video.name} frame {position}"),
            )
            while k < len(wanted) and wanted[k] == position:
                yield item
                k += 1
            if k == len(wanted):
                return
    raise InputError(
        f"{label}: the video ended before frame {wanted[k]} although it had {video.frame_count} frames "
        "when opened; re-upload it"
    )


_DONE = object()


def _prefetched(video: InputVideo, wanted: list[int], prefetch: int) -> Generator[VideoFrame, None, None]:
    items: _queue.Queue = _queue.Queue(maxsize=prefetch)
    stop = _threading.Event()

    def put(item: object) -> bool:
        while not stop.is_set():
            try:
                items.put(item, timeout=0.1)
                return True
            except _queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for frame in _sampled_frames(video, wanted, stop):
                if not put(frame):
                    return
            put(_DONE)
        except BaseException as exc:  # handed to the consumer, which raises it
            put(exc)

    worker = _threading.Thread(target=produce, name=f"decode {video.sha256[:8]}", daemon=True)
    worker.start()
    try:
        while True:
            item = items.get()
            if item is _DONE:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        worker.join()
