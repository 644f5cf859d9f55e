"""What every scorer consumes and produces: plain dataclasses, no torch, no storage."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..imaging import InputImage, as_input_image


@dataclass(frozen=True)
class Sample:
    """One generated output to judge against one or more references of its subject.

    Images are `masc_ui.imaging.InputImage`s: decoded once (RGB, EXIF applied) and identified by the SHA-256
    of their stored bytes, the key of every encoding cache. Anything `as_input_image` reads (a PIL image, an
    HxWx3 array, a file path, bytes) is accepted and converted when the sample is built, so library callers
    can pass PIL images; images already decoded at the edge are kept as they are (never decoded again).
    Masks are 2-D arrays (H, W) (bool, uint8 0..255 or float 0..1; foreground = non-zero), or None when
    not drawn; `ref_masks[i]` belongs to `refs[i]` (an empty tuple = no reference masks).

    Raises `InputError` naming `Sample.refs[i]` / `Sample.out` for an image that cannot be read.
    """

    refs: tuple[InputImage, ...]
    """Reference image(s) of the subject."""
    out: InputImage
    """The generated output image."""
    prompt: str | None = None
    """The full generation prompt."""
    subject: str | None = None
    """The subject's name (stripped from the prompt for PF; text segmentation)."""
    ref_masks: tuple[np.ndarray | None, ...] = ()
    """Masks of the references, same order as `refs`."""
    out_mask: np.ndarray | None = None
    """Mask of the subject in the output."""

    def __post_init__(self) -> None:
        refs = self.refs if isinstance(self.refs, (tuple, list)) else (self.refs,)
        object.__setattr__(self, "refs", tuple(as_input_image(r, name=f"Sample.refs[{i}]")
                                               for i, r in enumerate(refs)))
        object.__setattr__(self, "out", as_input_image(self.out, name="Sample.out"))
        object.__setattr__(self, "ref_masks", tuple(self.ref_masks))

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
