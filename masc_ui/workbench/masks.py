"""Masks: the mask editing of one browser session (brush strokes, Segment Anything clicks/boxes,
segmentation by name) and the segmentation use cases behind it and behind `masc-ui segment`.

A `MaskSession` holds, per target image (`ref0`, `ref1`, ..., `out`), the current mask, where it came from,
and the Segment Anything prompts so far, plus the session's decoded uploads (`Uploads`). It is plain data
(kept in the UI's per-session state); the model calls go through a `Predict` callable (the workbench's shared
`Segmentation` services). Coordinates are pixels (x, y) of the original image; masks are bool (H, W) of that
image.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np

from ..errors import InputError
from ..imaging import InputImage, InputVideo, read_frames
from ..metrics.frame_masks import FrameMasks
from ..models.registry import ModelRegistry
from ..settings import Settings

SOURCES = ("drawn", "sam", "text-prompted", "imported")
"""Where a mask came from (storage calls text-prompted masks `text`)."""

Predict = Callable[[InputImage, list[tuple[float, float, int]], "tuple[float, float, float, float] | None"], Any]
"""predict(image, points (x, y, label), box (x0, y0, x1, y1) or None) -> a `SamPrediction`-like object with
`masks`, `scores` and `best`."""


@dataclass
class Uploads:
    """The images of one Score-tab session, decoded once (when first used, i.e. at upload) and kept while they
    are on screen, so Run, Explain, Save and every mask render reuse the same `InputImage` (no decoding and no
    hashing per click). Keyed by the upload's file path, size and modification time."""

    images: dict[tuple[str, int, int], InputImage] = field(default_factory=dict)

    def get(self, path: str | Path, name: str, decode: Callable[[str, str], InputImage]) -> InputImage:
        """The decoded image of `path` (`decode(path, name)` the first time; its InputError propagates)."""
        try:
            st = os.stat(path)
            key = (str(path), st.st_size, st.st_mtime_ns)
        except (OSError, TypeError, ValueError):
            return decode(path, name)  # not a readable file: let decode say what is wrong
        if key not in self.images:
            self.images[key] = decode(str(path), name)
        return self.images[key]

    def keep_only(self, paths: Iterable[str | Path | None]) -> None:
        """Forget the images whose file is no longer on screen."""
        wanted = {str(p) for p in paths if p}
        for key in [k for k in self.images if k[0] not in wanted]:
            del self.images[key]


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
    uploads: Uploads = field(default_factory=Uploads)

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

    def click(self, target: str, image: InputImage, x: float, y: float, mode: str, predict: Predict) -> str:
        """Add a click in `mode` (`positive`, `negative`, `box`) and re-run Segment Anything; returns a message."""
        width, height = image.size
        if not (0 <= x < width and 0 <= y < height):
            raise InputError(f"click at ({x:.0f}, {y:.0f}) is outside the {width}x{height} image")
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
        return self._predict(target, image, predict)

    def undo(self, target: str, image: InputImage, predict: Predict) -> str:
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
        return self._predict(target, image, predict)

    def choose(self, target: str, index: int) -> str:
        p = self.sam(target)
        if not 0 <= index < len(p.candidates):
            raise InputError(f"candidate {index + 1} does not exist; there are {len(p.candidates)}")
        p.chosen = index
        self.set_mask(target, p.candidates[index], "sam")
        return f"candidate {index + 1} of {len(p.candidates)} (score {p.scores[index]:.2f})"

    def _predict(self, target: str, image: InputImage, predict: Predict) -> str:
        p = self.sam(target)
        if p.empty:
            return "add a click or finish the box"
        pred = predict(image, list(p.points), p.box)
        p.candidates = [np.asarray(m, dtype=bool) for m in pred.masks]
        p.scores = [float(s) for s in pred.scores]
        return self.choose(target, int(pred.best))


def target_names(n_refs: int) -> list[tuple[str, str]]:
    """(label, key) of every mask target: references first, then the output."""
    return [(f"reference {i + 1}", f"ref{i}") for i in range(n_refs)] + [("output", "out")]


@dataclass(frozen=True)
class FileMask:
    """A mask made for an image file (`masc-ui segment`)."""

    mask: np.ndarray
    """bool (H, W) at the image's size."""
    size: tuple[int, int]
    """(W, H) of the image."""
    summary: str
    """What the model found (scores, instances)."""
    doubtful: str | None
    """Why a text-prompted mask needs checking (nothing found, too small), else None."""


class Segmentation:
    """Segment Anything and SAM 3 for one process: the services of `settings`' profile in the shared registry."""

    def __init__(self, settings: Settings, models: ModelRegistry) -> None:
        self.settings = settings
        self.models = models

    def sam_predict(self, image: InputImage, points: list[tuple[float, float, int]],
                    box: tuple[float, float, float, float] | None, *, user: str | None) -> Any:
        """Segment Anything on `image` from pixel clicks (x, y, label 1|0) and/or a box (x0, y0, x1, y1);
        returns the service's SamPrediction (multimask candidates, scores, best). Embeddings are cached per
        image (`InputImage.sha256`)."""
        from ..segmentation import build_sam_service

        return build_sam_service(self.settings, self.models).predict(image, points=points, box=box, multimask=True)

    def segment_by_name(self, image: InputImage, subject: str | None, *, user: str | None) -> Any:
        """Text-prompted segmentation of `subject` in `image`; returns the TextSegmentation (mask, doubtful,
        reason)."""
        from ..segmentation import build_text_segmenter

        if not subject or not subject.strip():
            raise InputError("subject name is empty: type the subject's name (e.g. 'cat') to segment it by name")
        return build_text_segmenter(self.settings, self.models).segment(
            image, subject.strip(), self.settings.text_seg_threshold, self.settings.text_seg_min_fraction)

    def segment_frames_by_name(self, video: InputVideo, subject: str | None, *, user: str | None) -> FrameMasks:
        """A mask of `subject` in each frame of `video` that the image metrics score (`settings.video_frames`,
        linspace), by SAM 3 from the name (`FrameMasks` method `text`; frames where the mask is doubtful are listed in
        its params)."""
        from ..metrics.video_frames import image_metric_frames
        from ..segmentation import build_text_segmenter

        if not subject or not subject.strip():
            raise InputError("subject name is empty: type the subject's name (e.g. 'cat') to segment it by name")
        segmenter = build_text_segmenter(self.settings, self.models)
        s = self.settings
        return frame_masks_by_name(
            lambda image, words: segmenter.segment(image, words, s.text_seg_threshold, s.text_seg_min_fraction),
            video, subject.strip(), image_metric_frames(s).indices(video.frame_count),
            model_id=segmenter_id(segmenter), threshold=s.text_seg_threshold)

    def mask_from_brush(self, editor_value: object, size: tuple[int, int]) -> np.ndarray:
        """Bool (H, W) mask = alpha of the ImageEditor's brush layer(s), at the image's `size` (W, H)."""
        from ..segmentation.masks import mask_from_editor

        return np.asarray(mask_from_editor(editor_value, size), dtype=bool)

    def segment_file(self, path: Path, *, user: str | None, points: list[tuple[float, float, int]] = (),
                     box: tuple[float, float, float, float] | None = None, text: str | None = None,
                     multimask: bool = True, threshold: float | None = None, min_fraction: float | None = None,
                     fill_holes: bool = False, min_speck: int = 0, keep_largest: bool = False) -> FileMask:
        """A mask of image file `path` from clicks / a box (Segment Anything) or from `text` (SAM 3), tidied by
        `clean_mask` when asked (`masc-ui segment`)."""
        from ..imaging import open_image
        from ..segmentation import build_sam_service, build_text_segmenter, clean_mask

        if text is not None and (points or box):
            raise InputError("give either --text, or --point/--box clicks, not both")
        if text is None and not (points or box):
            raise InputError("nothing to segment with: give --point X,Y[,L] (repeatable), --box X0,Y0,X1,Y1 or "
                             "--text NAME")
        s = self.settings
        image = open_image(path, name=f"image {path}", max_pixels=s.max_image_pixels)
        doubtful = None
        if text is not None:
            result = build_text_segmenter(s, self.models).segment(
                image, text, threshold=s.text_seg_threshold if threshold is None else threshold,
                min_fraction=s.text_seg_min_fraction if min_fraction is None else min_fraction)
            mask, doubtful = result.mask, result.reason
            summary = f"SAM 3: {result.n_instances} instance(s) of {result.text!r}, scores " + (
                ", ".join(f"{v:.3f}" for v in result.scores) or "none")
        else:
            pred = build_sam_service(s, self.models).predict(image, points=points, box=box, multimask=multimask)
            mask = pred.mask
            summary = f"SAM: score {pred.score:.3f} (candidates {', '.join(f'{v:.3f}' for v in pred.scores)})"
        if fill_holes or min_speck or keep_largest:
            mask = clean_mask(mask, fill_holes=fill_holes, min_speck=min_speck, keep_largest=keep_largest)
        return FileMask(np.asarray(mask, dtype=bool), image.size, summary, doubtful)


def segmenter_id(segmenter: Any) -> str:
    """The model id a text segmenter records (its `model_id`, else its type)."""
    return str(getattr(segmenter, "model_id", type(segmenter).__name__))


def frame_masks_by_name(segment: Callable[[InputImage, str], Any], video: InputVideo, words: str,
                        indices: Iterable[int], *, model_id: str, threshold: float) -> FrameMasks:
    """`FrameMasks` (method `text`) of `words` in the frames `indices` of `video`: `segment(frame, words)` (a
    `TextSegmentation`: `mask`, `doubtful`) on each distinct frame, decoded once."""
    masks, doubtful = {}, []
    for frame in read_frames(video, sorted(set(int(i) for i in indices))):
        result = segment(frame.image, words)
        masks[frame.index] = np.asarray(result.mask, dtype=bool)
        if getattr(result, "doubtful", False):
            doubtful.append(frame.index)
    return FrameMasks.per_frame(masks, "text", {"text": words, "model_id": model_id, "threshold": threshold,
                                                "doubtful_frames": doubtful}, name=f"mask of {words!r} in {video.name}")
