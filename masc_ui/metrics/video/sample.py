"""What the video scorers consume: one generated video with its references, prompt and class labels.

The later integration builds these from a `Sample` whose output is a video; today they are built directly:

    >>> from masc_ui.imaging import open_video, open_image
    >>> sample = VideoSample(video=open_video("clip.mp4"), refs=(open_image("cup.jpg"),),  # doctest: +SKIP
    ...                      prompt="a cup of tea on a table", class_labels=("cup",))
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import InputError
from ...imaging import InputImage, InputVideo, as_input_image


@dataclass(frozen=True)
class VideoSample:
    """One generated video to judge (OpenS2V's unit: a video, its subject images, its prompt)."""

    video: InputVideo
    """The generated video (from `masc_ui.imaging.open_video`)."""
    refs: tuple[Any, ...] = ()
    """Reference (subject) images: `InputImage`s, or anything `as_input_image` accepts."""
    prompt: str | None = None
    """The full generation prompt."""
    class_labels: tuple[str | None, ...] = ()
    """One class label per reference (OpenS2V `class_label`, e.g. `cup`), read by NexusScore; None = that reference
    is not detected (OpenS2V skips `Man`/`Woman` references of face videos)."""
    subject: str | None = None
    """The subject's name, when known."""

    def ref_images(self) -> list[InputImage]:
        """`refs` as `InputImage`s (decoded once; `InputImage`s are returned as they are)."""
        return [as_input_image(r, name=f"reference image {i + 1}") for i, r in enumerate(self.refs)]


@dataclass(frozen=True)
class VideoNeeds:
    """The inputs a video scorer needs from each sample."""

    prompt: bool = False
    reference: bool = False
    class_labels: bool = False

    def missing(self, sample: VideoSample) -> list[str]:
        """Names of the needed inputs `sample` lacks: `reference`, `prompt`, `class_labels`."""
        lacking = []
        if self.reference and not sample.refs:
            lacking.append("reference")
        if self.prompt and not (sample.prompt or "").strip():
            lacking.append("prompt")
        if self.class_labels and (len(sample.class_labels) != len(sample.refs) or not sample.refs):
            lacking.append("class_labels")
        return lacking


_HINTS = {
    "reference": "add the subject's reference image(s)",
    "prompt": "give the generation prompt",
    "class_labels": "give one class label per reference image (OpenS2V `class_label`)",
}


def check_video_inputs(
    metric: str, needs: VideoNeeds, samples: Sequence[object], missing: str
) -> tuple[list[int], dict[int, str]]:
    """(indices of the samples that can be scored, {index: reason} of the others). `missing="raise"` raises
    `InputError` at the first sample lacking an input, `"nan"` gives it a reason instead."""
    if missing not in ("raise", "nan"):
        raise InputError(f"missing must be one of ('raise', 'nan'), got {missing!r}")
    ok, reasons = [], {}
    for i, sample in enumerate(samples):
        if not isinstance(sample, VideoSample):
            raise InputError(
                f"{metric} scores videos: sample {i} is a {type(sample).__name__}, expected "
                "masc_ui.metrics.video.sample.VideoSample"
            )
        if not isinstance(sample.video, InputVideo):
            raise InputError(
                f"{metric}: sample {i}'s video is a {type(sample.video).__name__}; open it with "
                "masc_ui.imaging.open_video"
            )
        lacking = needs.missing(sample)
        if not lacking:
            ok.append(i)
            continue
        reason = f"{metric} needs {', '.join(lacking)}, which sample {i} lacks"
        if missing == "raise":
            raise InputError(f"{reason}: {'; '.join(_HINTS[name] for name in lacking)}, or leave this metric out")
        reasons[i] = reason
    return ok, reasons
