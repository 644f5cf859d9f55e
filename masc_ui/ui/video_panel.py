"""A video output in the Score tab: its upload box (next to the output image; one output at a time), the strip of
the frames the image metrics score, the video's mask, and each metric's per-frame plot under the score table.

The video on screen lives in the mask session (`MaskSession.video`, a `VideoSession`), so the Score tab's Run,
Explain (of the selected frame), Save, the "out of date" note and Browse's Open see it like the output image. The
video's mask is drawn (brush) on one frame and reused unchanged on every frame, or segmented from the subject's name
in each sampled frame; like the images' masks it is never replaced silently (offered, undoable). The rule in force
is stated on screen and recorded in provenance (`masc_ui.metrics.video.frame_masks`).

The handlers are plain functions of `(wb, VideoSession, ...)` (tested directly); `video_events` connects them.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import gradio as gr
from gradio.data_classes import FileData

from .. import overlays
from ..errors import InputError
from ..imaging import InputVideo
from ..workbench import ScoreReport, Workbench
from ..workbench.explain import Explanation
from ..workbench.video_session import VideoSession
from .catalogue_panel import metric_choices as labelled_choices
from .editor_blobs import BrushEditor
from .upload import upload_limit, uploaded_path
from .video_plot import frame_series_figure

STATIC_RULE = (
    "the mask drawn on frame {frame} ({time:.2f} s) is reused unchanged on every frame: right while the "
    "camera and the subject hold still, wrong by as much as they move"
)
TEXT_RULE = "each of the {n} sampled frames has its own mask, segmented from the subject's name '{text}'"
NO_MASK = (
    "no mask of the video yet: paint over the subject on the selected frame and use the brush (reused on every "
    "frame), or segment each sampled frame by the subject's name"
)


class VideoUpload(gr.Video):
    """The output-video box: hands the uploaded file's path to the workbench unopened (PyAV decodes and checks it in
    `masc_ui.imaging`), only for a file inside Gradio's upload cache (`upload.uploaded_path`). No `__init__` of its
    own: Gradio builds the frontend config from `gr.Video.__init__`'s signature."""

    is_template = True

    def preprocess(self, payload: FileData | None) -> str | None:
        if payload is None:
            return None
        return uploaded_path(payload.path, self.GRADIO_CACHE, upload_limit())


@dataclass
class VideoPanel:
    box: gr.Column
    note: gr.Markdown
    strip: gr.Gallery
    frame_title: gr.Markdown
    editor: BrushEditor
    use_brush: gr.Button
    by_name: gr.Button
    undo: gr.Button
    clear: gr.Button
    view: gr.Image
    rule: gr.Markdown
    message: gr.Markdown
    proposal_box: gr.Group
    proposal_view: gr.Image
    apply: gr.Button
    discard: gr.Button
    plot_box: gr.Column | None = None
    plot: gr.Plot | None = None


def build_upload() -> VideoUpload:
    """The output-video upload box (under the output image)."""
    return VideoUpload(
        sources=["upload"],
        label="…or an output video",
        elem_id="out-video",
        height=180,
        loop=True,
        buttons=["download"],
    )


def build() -> VideoPanel:
    """The frame strip and the video's mask (under the Masks accordion), hidden until a video is loaded."""
    with gr.Column(visible=False, elem_id="video-panel") as box:
        note = gr.Markdown(elem_id="video-note")
        strip = gr.Gallery(
            label="Sampled frames: click one to draw the video's mask on it and to choose the frame Explain draws",
            columns=8,
            height=230,
            allow_preview=False,
            object_fit="contain",
            elem_id="frame-strip",
            interactive=False,
            buttons=[],
        )
        with gr.Accordion("Mask of the output video", open=True):
            frame_title = gr.Markdown(elem_id="frame-title")
            with gr.Row():
                with gr.Column(scale=3, min_width=260):
                    editor = BrushEditor(
                        type="numpy",
                        label="Brush on the selected frame",
                        brush=gr.Brush(colors=["#ff2a78"], color_mode="fixed", default_size=24),
                        eraser=gr.Eraser(default_size=24),
                        layers=False,
                        transforms=(),
                        sources=(),
                        elem_id="video-mask-editor",
                        height=340,
                    )
                    with gr.Row():
                        use_brush = gr.Button(
                            "Use brush as the mask of every frame", elem_id="video-mask-brush", size="sm", min_width=160
                        )
                        by_name = gr.Button(
                            "Segment each sampled frame by the subject's name",
                            elem_id="video-mask-by-name",
                            size="sm",
                            min_width=160,
                        )
                with gr.Column(scale=2, min_width=240):
                    view = gr.Image(
                        label="Mask on the selected frame",
                        interactive=False,
                        elem_id="video-mask-view",
                        height=240,
                        buttons=[],
                    )
                    rule = gr.Markdown(NO_MASK, elem_id="video-mask-note")
                    with gr.Row():
                        undo = gr.Button("Undo mask change", size="sm", elem_id="video-mask-undo")
                        clear = gr.Button("Clear the video's mask", size="sm", elem_id="video-mask-clear")
                    message = gr.Markdown(elem_id="video-mask-message", elem_classes=["action-message"])
                    with gr.Group(visible=False, elem_id="video-mask-proposal") as proposal_box:
                        proposal_view = gr.Image(
                            label="Proposed mask on the selected frame (not applied)",
                            interactive=False,
                            height=200,
                            elem_id="video-mask-proposal-view",
                            buttons=[],
                        )
                        with gr.Row():
                            apply = gr.Button(
                                "Apply proposed mask", variant="primary", size="sm", elem_id="video-mask-apply"
                            )
                            discard = gr.Button("Discard", size="sm", elem_id="video-mask-discard")
    return VideoPanel(
        box,
        note,
        strip,
        frame_title,
        editor,
        use_brush,
        by_name,
        undo,
        clear,
        view,
        rule,
        message,
        proposal_box,
        proposal_view,
        apply,
        discard,
    )


def build_plot(panel: VideoPanel) -> None:
    """The per-frame plot (under the score table), hidden until a video is loaded."""
    with gr.Column(visible=False, elem_id="frame-plot-box") as panel.plot_box:
        panel.plot = gr.Plot(
            label="Per-frame values of each metric (drawn by Run; red: the selected frame)", elem_id="frame-plot"
        )


# --- handlers ----------------------------------------------------------------------------------------------------


def describe(video: InputVideo, n_sampled: int) -> str:
    return (
        f"**Output video** {video.duration_s:.2f} s, {video.frame_count} frames at {video.fps:g} fps, "
        f"{video.size[0]}x{video.size[1]}, {video.codec}. The image metrics score the {n_sampled} frames below "
        "(evenly spaced, first and last included) and give their **mean**; the video metrics read their own "
        "frames."
    )


def strip_items(vs: VideoSession) -> list[tuple[Any, str]]:
    return [(f.image.pixels, f"#{f.index} · {f.time_s:.2f} s") for f in vs.frames]


def load_video(wb: Workbench, vs: VideoSession, path: str | None) -> str:
    """Decode the video in the box (once per file) and its sampled frames; returns the note about it. The video
    already on screen (e.g. a stored sample opened from Browse) keeps its frames, selection and mask; a new one
    starts with its first frame selected. InputError when the file is not a readable video
    (`VideoViews.open_upload`: an image, or a file FFmpeg cannot read)."""
    if not path:
        vs.reset()
        return ""
    if vs.video is not None and same_file(path, vs.video):
        vs.path = path
        vs.frames = vs.frames or wb.videos.sampled_frames(vs.video)
        vs.selected = vs.selected if vs.frame(vs.selected) is not None else vs.frames[0].index
        return describe(vs.video, len(vs.frames))
    video = wb.videos.open_upload(path, "output video")
    vs.show(path, video, wb.videos.sampled_frames(video))
    vs.selected = vs.frames[0].index
    return describe(video, len(vs.frames))


def refusal_note(vs: VideoSession, path: str | None) -> str:
    """What the note under the video box says once the box holds `path`: why the last upload was refused while the
    box is the one emptied after it (said once), else nothing."""
    refused, vs.refused = vs.refused, None
    return (refused or "") if path is None else ""


def same_file(path: str, video: InputVideo) -> bool:
    """Whether the file at `path` holds `video`'s bytes (its content hash, without decoding)."""
    try:
        with open(path, "rb") as fh:
            return hashlib.file_digest(fh, "sha256").hexdigest() == video.sha256
    except OSError:
        return False


def select_frame(vs: VideoSession, position: int) -> None:
    """Select the strip's `position`-th frame (InputError when there is no such frame)."""
    if not 0 <= position < len(vs.frames):
        raise InputError(f"there is no frame at position {position} of the strip (it has {len(vs.frames)})")
    vs.selected = vs.frames[position].index


def frame_label(vs: VideoSession) -> str:
    frame = vs.frame(vs.selected)
    return (
        ""
        if frame is None
        else f"**Selected: frame {frame.index}** ({frame.time_s:.2f} s): click another frame of the strip to change it"
    )


def mask_rule(vs: VideoSession) -> str:
    """What the video's mask is and how every frame gets it."""
    if vs.masks is None:
        return NO_MASK
    if vs.masks.method == "static":
        frame = int(vs.masks.params.get("frame", 0))
        time = vs.video.time_of(frame) if vs.video is not None else 0.0
        return f"**Mask rule:** {STATIC_RULE.format(frame=frame, time=time)} (source: {vs.source})."
    params = vs.masks.params
    text = TEXT_RULE.format(n=len(vs.masks.masks), text=params.get("text", "?"))
    doubtful = params.get("doubtful") or []
    warned = f" ⚠ doubtful on frame(s) {', '.join(str(d) for d in doubtful)}: check them." if doubtful else ""
    return f"**Mask rule:** {text} (model {params.get('model_id', '?')}).{warned}"


def _on_frame(vs: VideoSession, masks: Any, color=(255, 40, 120)) -> Any:
    frame = vs.selected_frame()
    if frame is None:
        return None
    return overlays.mask_overlay(frame.image, None if masks is None else masks.for_frame(frame.index), color=color)


def mask_view(vs: VideoSession) -> Any:
    """The selected frame (else the first) with the video's mask of that frame."""
    return _on_frame(vs, vs.masks)


def proposal_view(vs: VideoSession) -> Any:
    return None if vs.pending is None else _on_frame(vs, vs.pending.masks, color=(40, 140, 255))


def brush_mask(wb: Workbench, vs: VideoSession, editor_value: Any) -> str:
    """The brush layer drawn on the selected frame becomes the mask of every frame (`VideoSession.draw_mask`;
    undoable)."""
    frame = vs.frame(vs.selected)
    if frame is None:
        raise InputError("click a frame of the strip first: the brush draws on the selected frame")
    mask = wb.segmentation.mask_from_brush(editor_value, frame.image.size)
    if not mask.any():
        raise InputError("the brush layer is empty: paint over the subject on the selected frame first")
    before = vs.source
    vs.draw_mask(mask, frame.index)
    replaced = f"; it replaced the {before} mask ('Undo mask change' brings it back)" if before else ""
    return f"brush mask drawn on frame {frame.index}: {int(mask.sum()):,} px, reused on every frame{replaced}"


def name_masks(wb: Workbench, vs: VideoSession, subject: str | None, *, user: str | None) -> str:
    """A mask per sampled frame from the subject's name (SAM 3), applied or offered (`VideoSession.offer`)."""
    if vs.video is None:
        raise InputError("upload an output video first")
    masks = wb.segmentation.segment_frames_by_name(vs.video, subject, user=user)
    doubtful = masks.params.get("doubtful") or []
    reason = None
    if doubtful:
        reason = (
            f"on frame(s) {', '.join(str(d) for d in doubtful)} of {len(masks.masks)} SAM 3 found nothing or "
            "very little of the subject"
        )
    return f"'{masks.params.get('text', subject)}' in {len(masks.masks)} frames: " + vs.offer(
        masks, "text-prompted", doubtful=reason
    )


def explain_frame(
    wb: Workbench, vs: VideoSession, sample: Any, *, user: str | None, progress: Any = None
) -> tuple[Any, Explanation]:
    """(the frame, its MaSC explanation): the selected frame, else the first sampled one."""
    frame = vs.selected_frame()
    if frame is None:
        raise InputError("the output video has no sampled frame to explain")
    return frame, wb.scoring.explain_frame(sample, frame.index, user=user, progress=progress)


def metric_choices(wb: Workbench, vs: VideoSession, chosen: Sequence[str] | None) -> tuple[list, list[str]]:
    """(choices, chosen) of the Score tab's metric list: the image metrics, plus the video metrics while a video is
    loaded (all of them chosen when it arrives; the chosen ones that no longer apply dropped when it goes)."""
    specs = wb.scoring.metric_specs(video=vs.loaded)
    names = [s.name for s in specs]
    kept = [n for n in (chosen or []) if n in names]
    if vs.loaded:
        kept += [s.name for s in specs if s.media == "video" and s.name not in kept]
    return labelled_choices(wb, specs), kept


def plot_update(fig: Any) -> tuple[Any, Any]:
    """(the plot's box, the plot) showing `fig`; the box hidden while there is nothing to plot."""
    return gr.Column(visible=fig is not None), fig


def plot_of(wb: Workbench, vs: VideoSession, report: ScoreReport | None) -> Any:
    """The per-frame figure of `report` (None without a video or per-frame values)."""
    if vs.video is None or report is None:
        return None
    frame = vs.frame(vs.selected)
    return frame_series_figure(
        wb.videos.frame_series(report.values, vs.video),
        selected_time_s=None if frame is None else frame.time_s,
        demo=wb.status().is_demo,
    )
