"""Video use cases behind the Score, Rate and Browse tabs (thin calls for the UI): the sampled frames of an output
video (the frame strip), each metric's per-frame values over time (a line plot), one frame as an image sample (its
MaSC overlays through Explain), the poster frame, and the video's bytes for playback.

Frame times are seconds from the video's first frame (`InputVideo.time_of`: each frame's presentation time, with
the file's start offset removed), the one time base of the frame strip, the plot's axis, the selected-frame marker
and the mask's note.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..imaging import (
    InputImage,
    InputVideo,
    VideoFrame,
    VideoLimits,
    looks_like_video,
    open_video,
    poster_frame,
    read_frames,
)
from ..imaging.images import IMAGE_HEAD_BYTES, image_format
from ..metrics.sample import MetricValue, Sample
from ..settings import Settings


@dataclass(frozen=True)
class FrameSeries:
    """One metric's per-frame values of a video, in frame order (a repeated frame listed once)."""

    metric: str
    display_name: str
    frames: list[int]
    """Frame indices (0-based, increasing)."""
    times_s: list[float]
    """Seconds from the video's first frame to `frames[i]` (`InputVideo.time_of`)."""
    values: list[float | None]
    """The metric on each frame; None where that frame has no value."""
    value: float | None
    """The video's value (the mean, or the metric's own video rule); None when not computable."""
    lo: float
    hi: float
    higher_is_better: bool

    def rows(self) -> list[dict[str, Any]]:
        """Long-form rows `{metric, frame, time_s, value}` (what a line plot of several metrics takes)."""
        return [
            {"metric": self.display_name, "frame": f, "time_s": t, "value": v}
            for f, t, v in zip(self.frames, self.times_s, self.values)
        ]


class VideoViews:
    """The video use cases of one process (stateless apart from the settings)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def open_upload(self, path: str | Path, name: str = "output video") -> InputVideo:
        """The file a user put in a video box, opened as a video within the settings' limits (`open_video`), never
        as an image: an image file is refused as such (it belongs in an image box), anything else that FFmpeg cannot
        read is refused with a message about videos. InputError naming `name` and the file."""
        label = f"{name} ({Path(path).name})"
        try:
            with open(path, "rb") as fh:
                head = fh.read(IMAGE_HEAD_BYTES)
        except OSError:
            head = b""  # open_video says what is wrong with the path
        kind = None if looks_like_video(head) else image_format(head)
        if kind is not None:
            raise InputError(
                f"{label}: this is an image ({kind}), not a video: put images in the output image box; upload an "
                "MP4 (H.264) or WebM (VP9) file here"
            )
        return open_video(path, name=name, limits=VideoLimits.from_settings(self.settings))

    def sampled_frames(self, video: InputVideo) -> list[VideoFrame]:
        """The frames the image metrics score (`settings.video_frames`, linspace; each index once), decoded, with
        their times: the Score tab's frame strip."""
        from ..metrics.video.frames import image_metric_frames

        indices = sorted(set(image_metric_frames(self.settings).indices(video.frame_count)))
        return read_frames(video, indices)

    def frame_series(self, values: Mapping[str, MetricValue], video: InputVideo) -> list[FrameSeries]:
        """Per-frame values of every metric in `values` (a `ScoreReport.values` of a video sample) that has them
        (`extras["per_frame"]` with `extras["frames"]`), in the registry's order."""
        from ..metrics.registry import get_spec

        series = []
        for name, value in values.items():
            extras = value.extras or {}
            per_frame, sampling = extras.get("per_frame"), extras.get("frames")
            if not isinstance(per_frame, list) or not isinstance(sampling, Mapping):
                continue
            by_index: dict[int, float | None] = {}
            for index, v in zip(sampling.get("indices", []), per_frame):
                by_index.setdefault(int(index), None if v is None else float(v))
            spec = get_spec(name)
            frames = sorted(by_index)
            series.append(
                FrameSeries(
                    name,
                    spec.display_name,
                    frames,
                    [video.time_of(f) for f in frames],
                    [by_index[f] for f in frames],
                    None if value.is_nan else float(value.value),
                    float(spec.range[0]),
                    float(spec.range[1]),
                    spec.higher_is_better,
                )
            )
        return series

    def frame_sample(self, sample: Sample, index: int) -> Sample:
        """Frame `index` of `sample`'s video as an image sample (same references, masks, prompt; the frame's own
        output mask), what Explain draws overlays on."""
        from ..metrics.video.frames import frame_sample

        video = sample.out
        if not isinstance(video, InputVideo):
            raise InputError("the output is an image, not a video: there are no frames to choose from")
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < video.frame_count:
            raise InputError(f"frame {index!r} does not exist: the video has frames 0..{video.frame_count - 1}")
        return frame_sample(sample, index, read_frames(video, [index])[0].image)

    def poster(self, output: InputImage | InputVideo) -> InputImage:
        """What stands for an output in lists: the image itself, or a video's first frame."""
        return poster_frame(output) if isinstance(output, InputVideo) else output
