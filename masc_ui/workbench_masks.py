"""Mask editing for one browser session: brush strokes, Segment Anything clicks/boxes, segmentation by name.

A `MaskSession` holds, per target image (`ref0`, `ref1`, ..., `out`), the current mask, where it came from,
and the Segment Anything prompts so far. It is plain data (kept in the UI's per-session state); the model
calls go through a `Segmenter` (the workbench's shared services). Coordinates are pixels (x, y) of the
original image; masks are bool (H, W) of that image.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
from PIL import Image

from .errors import InputError

SOURCES = ("drawn", "sam", "text-prompted", "imported")
"""Where a mask came from (storage calls text-prompted masks `text`)."""


class Segmenter(Protocol):
    def sam_predict(self, image: Image.Image, points: list[tuple[float, float, int]],
                    box: tuple[float, float, float, float] | None) -> Any: ...


@dataclass
class SamPrompts:
    """Clicks and box of one target, in the order they were given (undo pops the last)."""

    points: list[tuple[float, float, int]] = field(default_factory=list)
    """(x, y, label) with label 1 = subject, 0 = not subject."""
    box: tuple[float, float, float, float] | None = None
    """(x0, y0, x1, y1), x0 <= x1, y0 <= y1."""
    pending_corner: tuple[float, float] | None = None
    """First corner of a box waiting for its second click."""
    history: list[str] = field(default_factory=list)
    """'point' / 'box' / 'corner' per action, for undo."""
    candidates: list[np.ndarray] = field(default_factory=list)
    """Multimask candidates of the last prediction, bool (H, W) each."""
    scores: list[float] = field(default_factory=list)
    chosen: int = 0

    @property
    def empty(self) -> bool:
        return not self.points and self.box is None


@dataclass
class MaskSession:
    """Masks and Segment Anything prompts of every target image in one Score tab session."""

    masks: dict[str, np.ndarray] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    prompts: dict[str, SamPrompts] = field(default_factory=dict)

    def set_mask(self, target: str, mask: np.ndarray | None, source: str) -> None:
        if source not in SOURCES:
            raise ValueError(f"mask source must be one of {SOURCES}, got {source!r}")
        if mask is None:
            self.masks.pop(target, None)
            self.sources.pop(target, None)
            return
        self.masks[target] = np.asarray(mask) > 0
        self.sources[target] = source

    def clear(self, target: str) -> None:
        self.set_mask(target, None, "drawn")
        self.prompts.pop(target, None)

    def reset(self) -> None:
        self.masks.clear()
        self.sources.clear()
        self.prompts.clear()

    def sam(self, target: str) -> SamPrompts:
        return self.prompts.setdefault(target, SamPrompts())

    def click(self, target: str, image: Image.Image, x: float, y: float, mode: str, segmenter: Segmenter) -> str:
        """Add a click in `mode` (`positive`, `negative`, `box`) and re-run Segment Anything; returns a message."""
        if not (0 <= x < image.width and 0 <= y < image.height):
            raise InputError(f"click at ({x:.0f}, {y:.0f}) is outside the {image.width}x{image.height} image")
        p = self.sam(target)
        if mode == "box":
            if p.pending_corner is None:
                p.pending_corner = (x, y)
                p.history.append("corner")
                return "box: first corner set, click the opposite corner"
            (x0, y0), p.pending_corner = p.pending_corner, None
            p.history[-1:] = ["box"] if p.history and p.history[-1] == "corner" else p.history[-1:] + ["box"]
            p.box = (min(x0, x), min(y0, y), max(x0, x), max(y0, y))
        elif mode in ("positive", "negative"):
            p.points.append((float(x), float(y), 1 if mode == "positive" else 0))
            p.history.append("point")
        else:
            raise InputError(f"click mode must be positive, negative or box, got {mode!r}")
        return self._predict(target, image, segmenter)

    def undo(self, target: str, image: Image.Image, segmenter: Segmenter) -> str:
        p = self.sam(target)
        if not p.history:
            return "nothing to undo"
        last = p.history.pop()
        if last == "point":
            p.points.pop()
        elif last == "corner":
            p.pending_corner = None
        else:
            p.box = None
        if p.empty:
            p.candidates, p.scores = [], []
            self.set_mask(target, None, "sam")
            return "all clicks undone; mask cleared"
        return self._predict(target, image, segmenter)

    def choose(self, target: str, index: int) -> str:
        p = self.sam(target)
        if not 0 <= index < len(p.candidates):
            raise InputError(f"candidate {index + 1} does not exist; there are {len(p.candidates)}")
        p.chosen = index
        self.set_mask(target, p.candidates[index], "sam")
        return f"candidate {index + 1} of {len(p.candidates)} (score {p.scores[index]:.2f})"

    def _predict(self, target: str, image: Image.Image, segmenter: Segmenter) -> str:
        p = self.sam(target)
        if p.empty:
            return "add a click or finish the box"
        pred = segmenter.sam_predict(image, list(p.points), p.box)
        p.candidates = [np.asarray(m, dtype=bool) for m in pred.masks]
        p.scores = [float(s) for s in pred.scores]
        return self.choose(target, int(pred.best))


def target_names(n_refs: int) -> list[tuple[str, str]]:
    """(label, key) of every mask target: references first, then the output."""
    return [(f"reference {i + 1}", f"ref{i}") for i in range(n_refs)] + [("output", "out")]
