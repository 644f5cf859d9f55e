"""What every scorer consumes and produces: plain dataclasses, no torch, no storage."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from PIL import Image


@dataclass(frozen=True)
class Sample:
    """One generated output to judge against one or more references of its subject.

    Images are RGB PIL images (EXIF already applied: build them with `masc_ui.imaging.load_image`).
    Masks are 2-D arrays (H, W) (bool, uint8 0..255 or float 0..1; foreground = non-zero), or None when
    not drawn; `ref_masks[i]` belongs to `refs[i]` (an empty tuple = no reference masks).
    """

    refs: tuple[Image.Image, ...]
    """Reference image(s) of the subject."""
    out: Image.Image
    """The generated output image."""
    prompt: str | None = None
    """The full generation prompt."""
    subject: str | None = None
    """The subject's name (stripped from the prompt for PF; text segmentation)."""
    ref_masks: tuple[np.ndarray | None, ...] = ()
    """Masks of the references, same order as `refs`."""
    out_mask: np.ndarray | None = None
    """Mask of the subject in the output."""

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
