"""The subject's mask in the frames of a video output, and how it was made (recorded in every value that used it).

Two ways to get a mask per frame (`FrameMasks.method`):
- `static`: one mask, drawn (brush or Segment Anything clicks) on one frame, reused unchanged on every frame. Right
  when the camera and the subject hold still; wrong by as much as they move. The frame it was drawn on is kept
  (`params["frame"]`, and in the stored mask version's params).
- `text`: a mask per sampled frame from the subject's name (SAM 3 text-prompted segmentation of each frame, see
  `masc_ui.workbench.masks.Segmentation.segment_frames_by_name`); the model and threshold are kept.

Each value computed with frame masks records `describe()` in its provenance params (`out_mask_frames`): the method,
and for `text` the segmentation model and threshold (what changes the masks).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...errors import InputError
from ...imaging import as_mask_array

METHODS = ("static", "text")


@dataclass(frozen=True, eq=False)
class FrameMasks:
    """Masks of the frames of one video: `for_frame(index)` is the (H, W) float32 mask in [0, 1] of that frame (None
    when the method gave none for it). Build with `FrameMasks.static` or `FrameMasks.per_frame`."""

    method: str
    """`static` or `text` (module docstring)."""
    masks: Mapping[int, np.ndarray]
    """Frame index -> mask; `static` holds one entry (the frame it was drawn on)."""
    params: dict[str, Any] = field(default_factory=dict)
    """JSON-able: `static`: `frame`; `text`: `text`, `model_id`, `threshold`, and per frame `doubtful` indices."""

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise InputError(f"frame masks: method must be one of {METHODS}, got {self.method!r}")
        if self.method == "static" and len(self.masks) != 1:
            raise InputError(f"static frame masks hold exactly one mask, got {len(self.masks)}")

    @classmethod
    def static(cls, mask: Any, frame: int = 0, *, name: str = "mask of the output") -> FrameMasks:
        """One mask (drawn on frame `frame`) used on every frame."""
        if isinstance(frame, bool) or not isinstance(frame, (int, np.integer)) or frame < 0:
            raise InputError(f"{name}: the frame it was drawn on must be an index >= 0, got {frame!r}")
        return cls("static", {int(frame): as_mask_array(mask, name=name)}, {"frame": int(frame)})

    @classmethod
    def per_frame(
        cls,
        masks: Mapping[int, Any],
        method: str = "text",
        params: Mapping[str, Any] | None = None,
        *,
        name: str = "mask of the output",
    ) -> FrameMasks:
        """A mask for each listed frame (e.g. text-prompted segmentation of each sampled frame)."""
        checked = {int(k): as_mask_array(m, name=f"{name}, frame {k}") for k, m in masks.items()}
        return cls(method, checked, dict(params or {}))

    def for_frame(self, index: int) -> np.ndarray | None:
        """The mask of frame `index`: the one mask for `static`, that frame's own otherwise (None when absent)."""
        if self.method == "static":
            return next(iter(self.masks.values()))
        return self.masks.get(int(index))

    def describe(self) -> dict[str, Any]:
        """What goes into the provenance params of the values that used these masks (what makes them differ)."""
        if self.method == "static":
            return static_rule()
        return text_rule(self.params.get("model_id"), self.params.get("threshold"))

    def digest(self) -> str:
        """SHA-256 over the method, params and every mask (for result caches)."""
        h = hashlib.sha256(repr((self.method, sorted(self.params.items(), key=str))).encode())
        for index in sorted(self.masks):
            mask = np.ascontiguousarray(self.masks[index], dtype=np.float32)
            h.update(f"{index}:{mask.shape}".encode())
            h.update(hashlib.sha256(mask.tobytes()).digest())
        return h.hexdigest()


def static_rule() -> dict[str, Any]:
    """`describe()` of static masks (what batch planning records without building them)."""
    return {"method": "static", "rule": "one mask reused on every frame"}


def text_rule(model_id: str | None, threshold: float | None) -> dict[str, Any]:
    """`describe()` of text-prompted frame masks made by `model_id` at `threshold` (None: not recorded in their
    params)."""
    return {"method": "text", "model_id": model_id, "threshold": threshold}
