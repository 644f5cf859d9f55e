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
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InputError
from ..imaging import InputImage, InputVideo, read_frames
from ..metrics.video.frame_masks import FrameMasks
from ..models.loaded_models import ModelRegistry
from ..settings import Settings
from .mask_sources import SOURCES, source_words
from .users import Accounts
from .video_session import VideoSession

if TYPE_CHECKING:
    from ..segmentation import PreEncode, SamPrediction, TextSegmentation

Predict = Callable[[InputImage, list[tuple[float, float, int]], "tuple[float, float, float, float] | None"], Any]
"""predict(image, points (x, y, label), box (x0, y0, x1, y1) or None) -> a `SamPrediction`-like object with
`masks`, `scores` and `best`."""


@dataclass
class Uploads:
    """The images of one Score-tab session, decoded once (when first used, i.e. at upload) and kept while they
    are on screen, so Run, Explain, Save and every mask render reuse the same `InputImage` (no decoding and no
    hashing per click). Keyed by the upload's file path, size and modification time."""

    images: dict[tuple[str, int, int], InputImage] = field(default_factory=dict)

    def get(
        self,
        path: str | Path,
        name: str,
        decode: Callable[[str, str], InputImage],
        max_pixels_held: int | None = None,
    ) -> InputImage:
        """The decoded image of `path` (`decode(path, name)` the first time; its InputError propagates). With
        `max_pixels_held`, an image that would make the images held exceed that many pixels is refused (InputError
        naming `MASC_MAX_SESSION_PIXELS`) and not kept; its size is read from the file's header, before decoding."""
        try:
            st = os.stat(path)
            key = (str(path), st.st_size, st.st_mtime_ns)
        except (OSError, TypeError, ValueError):
            return decode(str(path), name)  # not a readable file: let decode say what is wrong
        if key not in self.images:
            if max_pixels_held is not None:
                self._check_budget(key, path, name, max_pixels_held)
            self.images[key] = decode(str(path), name)
        return self.images[key]

    def pixels_held(self) -> int:
        """Pixels of the decoded images held (width x height summed)."""
        return sum(img.size[0] * img.size[1] for img in self.images.values())

    def clear(self) -> None:
        """Forget every decoded image (the page session ended)."""
        self.images.clear()

    def _check_budget(self, key: tuple[str, int, int], path: str | Path, name: str, budget: int) -> None:
        from PIL import Image, UnidentifiedImageError

        try:
            with Image.open(path) as header:
                width, height = header.size
        except (OSError, UnidentifiedImageError, ValueError):
            return  # not an image Pillow reads: decoding says what is wrong
        held = sum(img.size[0] * img.size[1] for k, img in self.images.items() if k[0] != key[0])
        if held + width * height > budget:
            raise InputError(
                f"{name} ({width}x{height}) is not taken: with it the images on screen would hold "
                f"{(held + width * height) / 1e6:.3g} MP decoded, over this page's budget of {budget / 1e6:.3g} MP "
                "(MASC_MAX_SESSION_PIXELS); remove some references or upload smaller images"
            )

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


MASK_HISTORY = 10
"""Mask changes kept per image for "Undo mask change" (each step holds one bool (H, W) mask)."""


@dataclass
class Proposal:
    """A mask offered for an image but not applied yet: the user applies it (replacing the current mask) or
    discards it."""

    mask: np.ndarray
    """bool (H, W) at the image's size."""
    source: str
    why: str
    """Why it waits, as the message shows it."""


@dataclass
class Step:
    """One earlier state of an image's mask (for undo)."""

    mask: np.ndarray | None
    source: str | None


@dataclass
class MaskSession:
    """Masks, Segment Anything prompts, undo history and offered masks of every target image in one Score tab
    session, plus which stored sample the inputs on screen are.

    Every mask belongs to the image it was made on (`owners`: target -> `InputImage.sha256`): when the image
    of a target changes, `keep_for` drops that target's mask, clicks, history and offer, so a mask never
    follows a new upload. Masks are never replaced silently: each change is undoable (`undo_mask`), and a
    result of Segment Anything or of the subject's name that would replace a mask made another way, or a
    doubtful one, is only offered (`pending`) until `apply_pending`. Inputs that replace the whole sample (an
    example, a stored sample) replace masks that are the user's unsaved work only when asked twice
    (`confirm_replace`). A video output and its mask, which follow the same rules, are in `video` (`VideoSession`)."""

    masks: dict[str, np.ndarray] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    owners: dict[str, str] = field(default_factory=dict)
    """target -> sha256 of the image its mask was made on (absent: not known, e.g. a mask set by a test)."""
    prompts: dict[str, SamPrompts] = field(default_factory=dict)
    history: dict[str, list[Step]] = field(default_factory=dict)
    pending: dict[str, Proposal] = field(default_factory=dict)
    uploads: Uploads = field(default_factory=Uploads)
    stored_sample: int | None = None
    """The stored sample the inputs on screen are (opened from Browse, or saved from here); None for a new
    sample. Save adds to it instead of making another; changing an image unlinks it."""
    saved: dict[str, np.ndarray] = field(default_factory=dict)
    """target -> its mask when the inputs were last loaded, opened or saved (`mark_saved`): a mask on screen that
    differs is the user's unsaved work (`unsaved`)."""
    warned: str | None = None
    """The action (`confirm_replace`) the user was last told would replace unsaved masks; cleared by any mask change."""
    video: VideoSession = field(default_factory=VideoSession)
    """The output video on screen, when the output is a video (then it stands for the output image), with its mask."""

    def set_mask(
        self, target: str, mask: np.ndarray | None, source: str, image: Any = None, *, undoable: bool = True
    ) -> None:
        """Make `mask` (bool (H, W), or None for no mask) the current mask of `target`, made on `image` (an
        `InputImage`, or anything with a `size`; its `sha256` is recorded as the mask's owner). The state
        before is kept for `undo_mask` when `undoable`. ValueError for an unknown source; InputError for a
        mask of another size than `image`."""
        if source not in SOURCES:
            raise ValueError(f"mask source must be one of {SOURCES}, got {source!r}")
        if mask is not None and image is not None and np.shape(mask) != tuple(image.size[::-1]):
            h, w = np.shape(mask)[:2]
            raise InputError(
                f"a {w}x{h} mask cannot belong to a {image.size[0]}x{image.size[1]} image; make the mask on this image"
            )
        if undoable and (mask is not None or target in self.masks):
            steps = self.history.setdefault(target, [])
            steps.append(Step(self.masks.get(target), self.sources.get(target)))
            del steps[:-MASK_HISTORY]
        self.pending.pop(target, None)
        self.warned = None
        if mask is None:
            self.masks.pop(target, None)
            self.sources.pop(target, None)
            return
        self.masks[target] = np.asarray(mask) > 0
        self.sources[target] = source
        owner = getattr(image, "sha256", None)
        if owner is not None:
            self.owners[target] = owner

    def offer(
        self, target: str, mask: np.ndarray, source: str, image: Any = None, *, doubtful: str | None = None
    ) -> str:
        """A new mask from a tool (`source`): applied when `target` has no mask or a mask of the same tool
        (refining), otherwise — and always when `doubtful` gives a reason — kept as the pending proposal until
        `apply_pending` / `discard_pending`. Returns the message to show."""
        px = int(np.count_nonzero(mask))
        current = self.sources.get(target)
        if doubtful is None and (target not in self.masks or current == source):
            self.set_mask(target, mask, source, image)
            return f"{source_words(source)} mask applied: {px:,} px"
        if doubtful is not None:
            why = f"⚠ doubtful mask ({px:,} px), not applied: {doubtful}"
        else:
            why = (
                f"new {source_words(source)} mask ({px:,} px) not applied yet: it would replace the current "
                f"{source_words(current)} mask ({int(self.masks[target].sum()):,} px)"
            )
        self.pending[target] = Proposal(np.asarray(mask) > 0, source, why)
        if image is not None and getattr(image, "sha256", None) is not None and target not in self.masks:
            self.owners[target] = image.sha256
        if doubtful is not None:
            return f"{why}. It is shown under 'Proposed mask': apply it only if it is right"
        return f"{why}. Press 'Apply proposed mask' to use it, or 'Discard' to keep what you have"

    def apply_pending(self, target: str, image: Any = None) -> str:
        """Make the pending proposal of `target` its mask (undoable)."""
        proposal = self.pending.get(target)
        if proposal is None:
            return "there is no proposed mask to apply"
        self.set_mask(target, proposal.mask, proposal.source, image)
        return (
            f"{source_words(proposal.source)} mask applied: {int(proposal.mask.sum()):,} px "
            "('Undo mask change' brings the previous one back)"
        )

    def discard_pending(self, target: str) -> str:
        if self.pending.pop(target, None) is None:
            return "there is no proposed mask to discard"
        return "proposed mask discarded; the current mask is unchanged"

    def undo_mask(self, target: str) -> str:
        """Bring back the mask `target` had before its last change."""
        steps = self.history.get(target)
        if not steps:
            return "no earlier mask of this image to go back to"
        step = steps.pop()
        self.pending.pop(target, None)
        self.warned = None
        if step.mask is None:
            self.masks.pop(target, None)
            self.sources.pop(target, None)
            return "mask change undone: this image has no mask again"
        self.masks[target] = step.mask
        self.sources[target] = step.source or "drawn"
        return f"mask change undone: back to the {source_words(step.source)} mask ({int(step.mask.sum()):,} px)"

    def clear(self, target: str) -> None:
        """Remove `target`'s mask (undoable) and its clicks."""
        self.set_mask(target, None, "drawn")
        self.prompts.pop(target, None)

    def forget(self, target: str) -> None:
        """Drop everything of `target` (its image is gone or another one): mask, clicks, history, offer."""
        for table in (self.masks, self.sources, self.owners, self.prompts, self.history, self.pending, self.saved):
            table.pop(target, None)

    def keep_for(self, images: dict[str, str | None]) -> list[str]:
        """Keep only what belongs to the images on screen (`images`: target -> sha256, None = no image): the
        state of a target whose image is gone or changed is forgotten. Returns the targets forgotten."""
        gone = [
            k
            for k in {*self.masks, *self.prompts, *self.history, *self.pending, *self.owners}
            if images.get(k) is None or (k in self.owners and self.owners[k] != images[k])
        ]
        for k in gone:
            self.forget(k)
        for k, sha in images.items():
            if sha is not None and (k in self.masks or k in self.pending):
                self.owners.setdefault(k, sha)
        return gone

    def mask_of(self, target: str, image: Any) -> np.ndarray | None:
        """`target`'s mask when it belongs to `image` (same content hash, or owner unknown), else None."""
        owner = self.owners.get(target)
        if owner is not None and getattr(image, "sha256", owner) != owner:
            return None
        return self.masks.get(target)

    def reset(self) -> None:
        """Forget every mask, click, history and offer, the output video and the link to a stored sample (new
        inputs)."""
        for table in (self.masks, self.sources, self.owners, self.prompts, self.history, self.pending, self.saved):
            table.clear()
        self.stored_sample = None
        self.warned = None
        self.video.reset()

    def mark_saved(self) -> None:
        """The masks on screen are stored, or came from storage or an example: replacing them loses nothing."""
        self.saved = dict(self.masks)
        self.warned = None

    def unsaved(self) -> list[str]:
        """Targets whose current mask is the user's unsaved work: made or changed here since the inputs were loaded,
        opened or saved (it differs from the mask `mark_saved` kept)."""
        return [
            t
            for t, m in self.masks.items()
            if t not in self.saved or self.saved[t].shape != m.shape or not np.array_equal(self.saved[t], m)
        ]

    def confirm_replace(self, action: str, doing: str, button: str) -> str | None:
        """Whether the inputs on screen may be replaced by `action` (a key such as `open:3`) now: None when no mask
        is unsaved, or when the user was told so for this same action and pressed its button again with no mask
        changed since. Otherwise the warning to show (`doing`: what the action does, e.g. "opening sample #3";
        `button`: the label of the button to press again), and the action is remembered."""
        unsaved = self.unsaved()
        if not unsaved or self.warned == action:
            self.warned = None
            return None
        self.warned = action
        listed = "; ".join(
            f"{_target_words(t)}: {source_words(self.sources.get(t))} mask, {int(self.masks[t].sum()):,} px"
            for t in unsaved
        )
        return (
            f"not done yet: {doing} would replace masks you made and have not saved ({listed}). Press "
            f"'{button}' again to replace them, or press Save in the Score tab first to keep them"
        )

    def sam(self, target: str) -> SamPrompts:
        return self.prompts.setdefault(target, SamPrompts())

    def click(self, target: str, image: Any, x: float, y: float, mode: str, predict: Predict) -> str:
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

    def undo(self, target: str, image: Any, predict: Predict) -> str:
        """Take back the last click (or box corner) and predict again from the clicks left."""
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
            return "all clicks undone; " + self.drop_sam_mask(target)
        return self._predict(target, image, predict)

    def drop_sam_mask(self, target: str) -> str:
        """Remove what the clicks made: a pending SAM proposal, or the applied SAM mask (undoable)."""
        if target in self.pending and self.pending[target].source == "sam":
            self.pending.pop(target)
            return "the proposed mask is discarded; the current mask is unchanged"
        if self.sources.get(target) == "sam":
            self.set_mask(target, None, "sam")
            return "mask cleared ('Undo mask change' brings it back)"
        return "the current mask is unchanged"

    def choose(self, target: str, index: int, image: Any = None) -> str:
        p = self.sam(target)
        if not 0 <= index < len(p.candidates):
            raise InputError(f"candidate {index + 1} does not exist; there are {len(p.candidates)}")
        p.chosen = index
        what = f"candidate {index + 1} of {len(p.candidates)} (score {p.scores[index]:.2f})"
        return f"{what}: {self.offer(target, p.candidates[index], 'sam', image)}"

    def _predict(self, target: str, image: Any, predict: Predict) -> str:
        p = self.sam(target)
        if p.empty:
            return "add a click or finish the box"
        pred = predict(image, list(p.points), p.box)
        p.candidates = [np.asarray(m, dtype=bool) for m in pred.masks]
        p.scores = [float(s) for s in pred.scores]
        return self.choose(target, int(pred.best), image)


def _target_words(target: str) -> str:
    return "the output" if target == "out" else f"reference {int(target[3:]) + 1}"


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

    def png(self) -> bytes:
        """The mask as the one mask PNG encoding (8-bit, 255 = subject)."""
        from ..segmentation.masks import mask_to_png

        return mask_to_png(self.mask)


class Segmentation:
    """Segment Anything and SAM 3 for one process: the services of `settings`' profile in the shared registry.
    Every call that runs a model is for admins (`accounts`)."""

    def __init__(self, settings: Settings, models: ModelRegistry, accounts: Accounts | None = None) -> None:
        self.settings = settings
        self.models = models
        self._accounts = accounts if accounts is not None else Accounts()

    def sam_predict(
        self,
        image: InputImage,
        points: list[tuple[float, float, int]],
        box: tuple[float, float, float, float] | None,
        *,
        user: str | None,
    ) -> SamPrediction:
        """Segment Anything on `image` from pixel clicks (x, y, label 1|0) and/or a box (x0, y0, x1, y1);
        returns the service's SamPrediction (multimask candidates, scores, best). Embeddings are cached per
        image (`InputImage.sha256`). Admins only."""
        from ..segmentation import build_sam_service

        self._accounts.require_admin(user, "segmenting")
        return build_sam_service(self.settings, self.models).predict(image, points=points, box=box, multimask=True)

    def pre_encode(self, images: Iterable[InputImage | None]) -> list[PreEncode]:
        """Start Segment Anything's image encoding of each image on the service's worker thread and return at once
        (the `PreEncode` jobs): called when images are uploaded or opened, so the first click finds the embedding
        ready instead of waiting for the encoder. An image already cached or being encoded is not encoded again; a
        SAM that cannot load is reported by the job (and again by the first click), never here."""
        from ..segmentation import build_sam_service

        service = build_sam_service(self.settings, self.models)
        return [service.encode_in_background(image) for image in images if image is not None]

    def segment_by_name(
        self, image: InputImage, subject: str | None, *, user: str | None, threshold: float | None = None
    ) -> TextSegmentation:
        """Text-prompted segmentation of `subject` in `image`; returns the TextSegmentation (mask at the image's
        size, doubtful, reason). `threshold`: SAM 3's instance score threshold (default
        `settings.text_seg_threshold`). Admins only."""
        from ..segmentation import build_text_segmenter

        self._accounts.require_admin(user, "segmenting")
        if not subject or not subject.strip():
            raise InputError("subject name is empty: type the subject's name (e.g. 'cat') to segment it by name")
        return build_text_segmenter(self.settings, self.models).segment(
            image,
            subject.strip(),
            self.settings.text_seg_threshold if threshold is None else float(threshold),
            self.settings.text_seg_min_fraction,
        )

    def segment_frames_by_name(self, video: InputVideo, subject: str | None, *, user: str | None) -> FrameMasks:
        """A mask of `subject` in each frame of `video` that the image metrics score (`settings.video_frames`,
        linspace), by SAM 3 from the name (`FrameMasks` method `text`; frames where the mask is doubtful are listed in
        its params). Admins only."""
        from ..metrics.video.frames import image_metric_frames
        from ..segmentation import build_text_segmenter

        self._accounts.require_admin(user, "segmenting")
        if not subject or not subject.strip():
            raise InputError("subject name is empty: type the subject's name (e.g. 'cat') to segment it by name")
        segmenter = build_text_segmenter(self.settings, self.models)
        s = self.settings
        return frame_masks_by_name(
            lambda image, words: segmenter.segment(image, words, s.text_seg_threshold, s.text_seg_min_fraction),
            video,
            subject.strip(),
            image_metric_frames(s).indices(video.frame_count),
            model_id=segmenter_id(segmenter),
            threshold=s.text_seg_threshold,
        )

    def mask_from_brush(self, editor_value: Mapping[str, Any] | None, size: tuple[int, int]) -> np.ndarray:
        """Bool (H, W) mask = alpha of the ImageEditor's brush layer(s), at the image's `size` (W, H)."""
        from ..segmentation.masks import mask_from_editor

        return np.asarray(mask_from_editor(editor_value, size), dtype=bool)

    def segment_file(
        self,
        image: Path | InputImage,
        *,
        user: str | None,
        points: Sequence[tuple[float, float, int]] = (),
        box: tuple[float, float, float, float] | None = None,
        text: str | None = None,
        multimask: bool = True,
        threshold: float | None = None,
        min_fraction: float | None = None,
        fill_holes: bool = False,
        min_speck: int = 0,
        keep_largest: bool = False,
    ) -> FileMask:
        """A mask of `image` (a file, or one `open_file_image` opened) from clicks / a box (Segment Anything) or from
        `text` (SAM 3), tidied by `clean_mask` when asked (`masc-ui segment`). Admins only."""
        from ..segmentation import build_sam_service, build_text_segmenter, clean_mask

        self._accounts.require_admin(user, "segmenting")
        check_file_prompts(points, box, text)
        s = self.settings
        if not isinstance(image, InputImage):
            image = open_file_image(image, s)
        doubtful = None
        if text is not None:
            result = build_text_segmenter(s, self.models).segment(
                image,
                text,
                threshold=s.text_seg_threshold if threshold is None else threshold,
                min_fraction=s.text_seg_min_fraction if min_fraction is None else min_fraction,
            )
            mask, doubtful = result.mask, result.reason
            summary = f"SAM 3: {result.n_instances} instance(s) of {result.text!r}, scores " + (
                ", ".join(f"{v:.3f}" for v in result.scores) or "none"
            )
        else:
            pred = build_sam_service(s, self.models).predict(image, points=points, box=box, multimask=multimask)
            mask = pred.mask
            summary = f"SAM: score {pred.score:.3f} (candidates {', '.join(f'{v:.3f}' for v in pred.scores)})"
        if fill_holes or min_speck or keep_largest:
            mask = clean_mask(mask, fill_holes=fill_holes, min_speck=min_speck, keep_largest=keep_largest)
        mask = np.asarray(mask, dtype=bool)
        if mask.shape != image.size[::-1]:  # never write a mask of another size than its image
            raise InputError(
                f"the segmentation of {image.name} came back {mask.shape[1]}x{mask.shape[0]}, the image is "
                f"{image.size[0]}x{image.size[1]}; nothing was written"
            )
        return FileMask(mask, image.size, summary, doubtful)


def open_file_image(path: Path, settings: Settings) -> InputImage:
    """The image file `masc-ui segment` masks, decoded within the settings' size limit (InputError naming it)."""
    from ..imaging import open_image

    return open_image(path, name=f"image {path}", max_pixels=settings.max_image_pixels)


def check_file_prompts(
    points: Sequence[tuple[float, float, int]], box: tuple[float, float, float, float] | None, text: str | None
) -> None:
    """InputError unless exactly one kind of prompt is given for `masc-ui segment`: clicks and/or a box, or a name
    (checked before any model is loaded)."""
    if text is not None and (points or box):
        raise InputError("give either --text, or --point/--box clicks, not both")
    if text is None and not (points or box):
        raise InputError("nothing to segment with: give --point X,Y[,L] (repeatable), --box X0,Y0,X1,Y1 or --text NAME")
    if text is not None and not text.strip():
        raise InputError("--text is empty: give the name of what to segment (e.g. --text dog)")


def segmenter_id(segmenter: Any) -> str:
    """The model id a text segmenter records (its `model_id`, else its type)."""
    return str(getattr(segmenter, "model_id", type(segmenter).__name__))


def frame_masks_by_name(
    segment: Callable[[InputImage, str], Any],
    video: InputVideo,
    words: str,
    indices: Iterable[int],
    *,
    model_id: str,
    threshold: float,
) -> FrameMasks:
    """`FrameMasks` (method `text`) of `words` in the frames `indices` of `video`: `segment(frame, words)` (a
    `TextSegmentation`: `mask`, `doubtful`) on each distinct frame, decoded once."""
    masks, doubtful = {}, []
    for frame in read_frames(video, sorted(set(int(i) for i in indices))):
        result = segment(frame.image, words)
        masks[frame.index] = np.asarray(result.mask, dtype=bool)
        if getattr(result, "doubtful", False):
            doubtful.append(frame.index)
    return FrameMasks.per_frame(
        masks,
        "text",
        {"text": words, "model_id": model_id, "threshold": threshold, "doubtful_frames": doubtful},
        name=f"mask of {words!r} in {video.name}",
    )
