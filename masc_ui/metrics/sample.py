"""What every scorer consumes and produces: plain dataclasses, no torch, no storage."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import InputError
from ..imaging import InputImage, InputVideo, as_input_image


@dataclass(frozen=True)
class Sample:
    """One generated output to judge against one or more references of its subject.

    Images are `masc_ui.imaging.InputImage`s: decoded once (RGB, EXIF applied) and identified by the SHA-256
    of their stored bytes, the key of every encoding cache. Anything `as_input_image` reads (a PIL image, an
    HxWx3 array, a file path, bytes) is accepted and converted when the sample is built, so library callers
    can pass PIL images; images already decoded at the edge are kept as they are (never decoded again).
    Masks are 2-D arrays (H, W) (bool, uint8 0..255 or float 0..1; foreground = non-zero), or None when
    not drawn; `ref_masks[i]` belongs to `refs[i]` (an empty tuple = no reference masks).

    The output may be a video (`masc_ui.imaging.InputVideo`, from `open_video`; kept as it is): every image metric
    then applies to its sampled frames (`masc_ui.metrics.video.frames`) and the video metrics apply to it. Its
    `out_mask` is then a `masc_ui.metrics.video.frame_masks.FrameMasks` (the mask of each frame, and how it was made), or
    a 2-D array = one mask reused on every frame (`FrameMasks.static`).

    Raises `InputError` naming `Sample.refs[i]` / `Sample.out` for an image that cannot be read.
    """

    refs: tuple[InputImage, ...]
    """Reference image(s) of the subject."""
    out: InputImage | InputVideo
    """The generated output: an image, or a video."""
    prompt: str | None = None
    """The full generation prompt."""
    subject: str | None = None
    """The subject's name (stripped from the prompt for PF; text segmentation)."""
    ref_masks: tuple[np.ndarray | None, ...] = ()
    """Masks of the references, same order as `refs`."""
    out_mask: Any = None
    """Mask of the subject in the output: a 2-D array; for a video, a `FrameMasks` or a 2-D array used on every
    frame; None when not drawn."""
    ref_labels: tuple[str | None, ...] = ()
    """Class label of each reference (OpenS2V `class_label`, e.g. `cup`), read by NexusScore; None = that reference
    is not detected; empty = the subject's name for every reference."""

    def __post_init__(self) -> None:
        refs = self.refs if isinstance(self.refs, (tuple, list)) else (self.refs,)
        object.__setattr__(self, "refs", tuple(as_input_image(r, name=f"Sample.refs[{i}]") for i, r in enumerate(refs)))
        if not isinstance(self.out, InputVideo):
            object.__setattr__(self, "out", as_input_image(self.out, name="Sample.out"))
        object.__setattr__(self, "ref_masks", tuple(self.ref_masks))
        object.__setattr__(self, "ref_labels", tuple(self.ref_labels))

    @property
    def is_video(self) -> bool:
        """True when the output is a video."""
        return isinstance(self.out, InputVideo)

    @property
    def out_image(self) -> InputImage:
        """The output of an image sample; `InputError` when it is a video (an image metric reads a video's sampled
        frames as image samples: `masc_ui.metrics.score_metrics` does that)."""
        if isinstance(self.out, InputVideo):
            raise InputError(
                f"the output {self.out.name!r} is a video and this scores images; score it with "
                "masc_ui.metrics.score_metrics, which applies image metrics to its sampled frames"
            )
        return self.out

    @property
    def out_video(self) -> InputVideo:
        """The output of a video sample; `InputError` when it is an image."""
        if not isinstance(self.out, InputVideo):
            raise InputError(f"the output {self.out.name!r} is an image; a video metric needs a video output")
        return self.out

    def class_labels(self) -> tuple[str | None, ...]:
        """`ref_labels`, or the subject's name for every reference when none were given (() without a subject)."""
        if self.ref_labels:
            return self.ref_labels
        subject = (self.subject or "").strip()
        return tuple(subject for _ in self.refs) if subject else ()

    def ref_mask(self, i: int) -> np.ndarray | None:
        return self.ref_masks[i] if i < len(self.ref_masks) else None


@dataclass
class MetricValue:
    """One metric's value for one sample. `value` is NaN (and `reason` says why) when not computable."""

    metric: str
    value: float
    reason: str | None = None
    extras: dict[str, Any] = field(default_factory=dict)
    """JSON-able diagnostics (per-reference values, stripped prompt, patch counts, ...)."""
    provenance: dict[str, Any] = field(default_factory=dict)
    """model_id, revision, params, code_version, device, dtype."""

    @property
    def is_nan(self) -> bool:
        return math.isnan(self.value)
