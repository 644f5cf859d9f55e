"""The output video of one Score-tab session (`MaskSession.video`): the video on screen, decoded once, the frames the
image metrics score (the frame strip), the selected frame, and the video's mask (`FrameMasks`).

The video's mask follows the rule of the images' masks (`MaskSession`): nothing replaces it silently. A brush mask
replaces it with an undo step; masks segmented from the subject's name are applied only when there is no mask or a
mask made the same way, and never when a frame's mask is doubtful: otherwise they are offered (`pending`) until
`apply_pending`. Plain data, kept in the UI's per-session state; decoding goes through the workbench.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..imaging import InputVideo, VideoFrame
from ..metrics.video.frame_masks import FrameMasks
from .mask_sources import source_words

VIDEO_MASK_HISTORY = 10
"""Changes of the video's mask kept for "Undo mask change"."""


@dataclass
class VideoProposal:
    """Masks offered for the video but not applied yet."""

    masks: FrameMasks
    source: str
    why: str


@dataclass
class VideoSession:
    path: str | None = None
    """The file the video box holds (the video's upload, or the stored bytes of an opened sample)."""
    video: InputVideo | None = None
    frames: list[VideoFrame] = field(default_factory=list)
    """The frames the image metrics score (`VideoViews.sampled_frames`), in index order."""
    selected: int | None = None
    """The selected frame's index (None: none yet)."""
    masks: FrameMasks | None = None
    source: str | None = None
    """How `masks` was made, as mask sources are named: `drawn`, `text-prompted`, `imported`."""
    history: list[tuple[FrameMasks | None, str | None]] = field(default_factory=list)
    pending: VideoProposal | None = None
    refused: str | None = None
    """Why the last upload was refused, until the emptied video box has said it (`video_panel.load_video`)."""

    @property
    def loaded(self) -> bool:
        return self.video is not None

    def reset(self) -> None:
        """No video on screen: forget it, its frames, selection, masks, history and offer."""
        self.path, self.video, self.frames, self.selected = None, None, [], None
        self.masks, self.source, self.history, self.pending = None, None, [], None

    def show(self, path: str | None, video: InputVideo, frames: list[VideoFrame]) -> None:
        """A new video on screen (what belonged to the previous one is forgotten)."""
        self.reset()
        self.path, self.video, self.frames = path, video, list(frames)

    def frame(self, index: int | None) -> VideoFrame | None:
        return next((f for f in self.frames if f.index == index), None)

    def selected_frame(self) -> VideoFrame | None:
        """The selected frame, else the first sampled frame (None without a video)."""
        return self.frame(self.selected) or (self.frames[0] if self.frames else None)

    def mask_sources(self) -> dict[str, str]:
        """The output mask's source for Save (`{"out": ...}` while the video has a mask)."""
        return {"out": self.source} if self.loaded and self.masks is not None and self.source else {}

    def set_masks(self, masks: FrameMasks | None, source: str | None, *, undoable: bool = True) -> None:
        if undoable and (masks is not None or self.masks is not None):
            self.history.append((self.masks, self.source))
            del self.history[:-VIDEO_MASK_HISTORY]
        self.masks, self.source, self.pending = masks, (source if masks is not None else None), None

    def draw_mask(self, mask: np.ndarray, frame_index: int) -> None:
        """A mask drawn on frame `frame_index`, bool (H, W) at the video's size, becomes the mask of every frame
        (`FrameMasks.static`, source `drawn`; undoable)."""
        self.set_masks(FrameMasks.static(mask, frame_index, name="mask of the output video"), "drawn")

    def offer(self, masks: FrameMasks, source: str, *, doubtful: str | None = None) -> str:
        """Masks from a tool: applied when the video has no mask or one made the same way and none is doubtful,
        otherwise offered (`pending`). Returns the message to show."""
        if doubtful is None and (self.masks is None or self.source == source):
            self.set_masks(masks, source)
            return f"{source_words(source)} masks applied"
        if doubtful is not None:
            why = f"⚠ doubtful masks, not applied: {doubtful}"
            tail = "They are shown under 'Proposed mask': apply them only if they are right"
        else:
            why = (
                f"new {source_words(source)} masks not applied yet: they would replace the current "
                f"{source_words(self.source)} mask"
            )
            tail = "Press 'Apply proposed mask' to use them, or 'Discard' to keep what you have"
        self.pending = VideoProposal(masks, source, why)
        return f"{why}. {tail}"

    def apply_pending(self) -> str:
        if self.pending is None:
            return "there is no proposed mask to apply"
        source = self.pending.source
        self.set_masks(self.pending.masks, source)
        return f"{source_words(source)} masks applied ('Undo mask change' brings the previous mask back)"

    def discard_pending(self) -> str:
        if self.pending is None:
            return "there is no proposed mask to discard"
        self.pending = None
        return "proposed mask discarded; the video's mask is unchanged"

    def undo(self) -> str:
        if not self.history:
            return "no earlier mask of the video to go back to"
        self.masks, self.source = self.history.pop()
        self.pending = None
        if self.masks is None:
            return "mask change undone: the video has no mask again"
        return f"mask change undone: back to the {source_words(self.source)} mask"

    def clear(self) -> str:
        if self.masks is None:
            return "the video has no mask to clear"
        self.set_masks(None, None)
        return "the video's mask is cleared ('Undo mask change' brings it back)"
