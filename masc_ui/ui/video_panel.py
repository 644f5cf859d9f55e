"""A video output in the Score tab: its upload box, the strip of the frames the image metrics score, each metric's
per-frame plot, the MaSC overlays of the clicked frame, and the video's mask: drawn (brush) on one frame and reused
unchanged on every frame, or segmented from the subject's name in each sampled frame (the rule is stated on screen
and recorded in provenance, `masc_ui.metrics.frame_masks`).

The handlers are plain functions of `(wb, VideoState, ...)` (tested directly); `wire` connects them to the
components. The Score tab builds its sample with `video_sample` when a video is loaded (it then replaces the output
image).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import gradio as gr
from gradio.context import LocalContext
from gradio.data_classes import FileData

from .. import overlays
from ..errors import InputError, WorkbenchError
from ..imaging import InputImage, InputVideo, VideoFrame
from ..metrics.frame_masks import FrameMasks
from ..metrics.sample import Sample
from ..workbench import ScoreReport, Workbench
from .gpu import gpu
from .upload import upload_limit, uploaded_path
from .users import user_of
from .video_plot import frame_series_figure

VIDEO_SUFFIXES = (".mp4", ".webm", ".mov", ".mkv")
"""What the upload box offers (anything else FFmpeg decodes is accepted too; the decoder decides)."""
STATIC_RULE = ("the mask drawn on frame {frame} ({time:.2f} s) is reused unchanged on every frame: right while the "
               "camera and the subject hold still, wrong by as much as they move")
TEXT_RULE = "each of the {n} sampled frames has its own mask, segmented from the subject's name '{text}'"


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
class VideoState:
    """Per session: the output video on screen, decoded once, its sampled frames, the selected one and its mask."""

    path: str | None = None
    video: InputVideo | None = None
    frames: list[VideoFrame] = field(default_factory=list)
    """The frames the image metrics score (`Workbench.sampled_frames`), in index order."""
    selected: int | None = None
    """The clicked frame's index (None: none yet)."""
    masks: FrameMasks | None = None
    mask_source: str | None = None
    """How `masks` was made, as the Score tab names mask sources: `drawn`, `text-prompted`, `imported`."""

    def reset(self) -> None:
        self.path, self.video, self.frames, self.selected = None, None, [], None
        self.masks, self.mask_source = None, None

    def frame(self, index: int | None) -> VideoFrame | None:
        return next((f for f in self.frames if f.index == index), None)


@dataclass
class VideoPanel:
    state: gr.State
    box: gr.Column
    note: gr.Markdown
    strip: gr.Gallery
    plot: gr.Plot
    frame_title: gr.Markdown
    cp_map: gr.Image
    best_map: gr.Image
    lines: gr.Image
    pf_map: gr.Image
    frame_notes: gr.Markdown
    editor: gr.ImageEditor
    use_brush: gr.Button
    by_name: gr.Button
    clear_mask: gr.Button
    mask_view: gr.Image
    mask_note: gr.Markdown
    after_run: tuple = ()
    """After `wire`: (handler, inputs, outputs) that draws the per-frame plot of Run's report (chain it after Run)."""


def build_upload() -> VideoUpload:
    """The output-video upload box (place it next to the output image)."""
    return VideoUpload(sources=["upload"], label="…or an output video (mp4, webm, mov, mkv)", elem_id="out-video",
                       height=220, loop=True, buttons=["download"])


def build() -> VideoPanel:
    """The panel under the score table, hidden until a video is loaded."""
    state = gr.State(VideoState())
    with gr.Column(visible=False, elem_id="video-panel") as box:
        note = gr.Markdown(elem_id="video-note")
        strip = gr.Gallery(label="Sampled frames: click one to explain it and to draw the video's mask on it",
                           columns=8, height=230, allow_preview=False, object_fit="contain", elem_id="frame-strip",
                           interactive=False, buttons=[])
        plot = gr.Plot(label="Per-frame values of each metric (drawn by Run)", elem_id="frame-plot")
        frame_title = gr.Markdown("Click a frame of the strip to explain it.", elem_id="frame-title")
        with gr.Row():
            cp_map = gr.Image(label="CP over reference 1 (this frame)", interactive=False, elem_id="frame-cp-map",
                              height=300, buttons=["download"], min_width=200)
            best_map = gr.Image(label="Best match on this frame", interactive=False, elem_id="frame-best-map",
                                height=300, buttons=["download"], min_width=200)
        with gr.Row():
            lines = gr.Image(label="Top correspondences (this frame)", interactive=False, elem_id="frame-lines",
                             height=300, buttons=["download"], min_width=200)
            pf_map = gr.Image(label="PF pooling attention (this frame)", interactive=False, elem_id="frame-pf-map",
                              height=300, buttons=["download"], min_width=200)
        frame_notes = gr.Markdown(elem_id="frame-notes")
        with gr.Accordion("Mask of the output video", open=True):
            with gr.Row():
                with gr.Column(scale=3, min_width=240):
                    editor = gr.ImageEditor(type="numpy", label="Brush on the selected frame",
                                            brush=gr.Brush(colors=["#ff2a78"], color_mode="fixed", default_size=24),
                                            eraser=gr.Eraser(default_size=24), layers=False, transforms=(),
                                            sources=(), elem_id="video-mask-editor", height=360)
                    with gr.Row():
                        use_brush = gr.Button("Use brush as the mask of every frame", elem_id="video-mask-brush",
                                              size="sm")
                        by_name = gr.Button("Segment each sampled frame by the subject's name",
                                            elem_id="video-mask-by-name", size="sm")
                        clear_mask = gr.Button("Clear the video's mask", elem_id="video-mask-clear", size="sm")
                with gr.Column(scale=2, min_width=200):
                    mask_view = gr.Image(label="Mask on the selected frame", interactive=False,
                                         elem_id="video-mask-view", height=260, buttons=[])
                    mask_note = gr.Markdown("no mask of the video yet", elem_id="video-mask-note")
    return VideoPanel(state, box, note, strip, plot, frame_title, cp_map, best_map, lines, pf_map, frame_notes,
                      editor, use_brush, by_name, clear_mask, mask_view, mask_note)


# --- what the Score tab asks of the panel ----------------------------------------------------------------------

def has_video(state: VideoState | None) -> bool:
    return state is not None and state.video is not None


def video_sample(wb: Workbench, state: VideoState, refs: Sequence[InputImage], prompt: str | None,
                 subject: str | None, ref_masks: Sequence[Any]) -> Sample:
    """The sample on screen when the output is the loaded video (with the video's mask)."""
    return wb.make_sample(list(refs), state.video, prompt, subject, list(ref_masks), state.masks)


def mask_sources(state: VideoState | None) -> dict[str, str]:
    """The output mask's source for Save (`{"out": ...}` when the video has a mask)."""
    if not has_video(state) or state.masks is None or state.mask_source is None:
        return {}
    return {"out": state.mask_source}


def row_notes(report: ScoreReport | None) -> dict[str, str]:
    """metric -> how its video value was made, for the score table: `mean over N sampled frames` for an image metric
    scored per frame, `over N frames (the metric's own rule)` for a video metric that kept per-frame values."""
    notes: dict[str, str] = {}
    for name, value in (report.values if report is not None else {}).items():
        extras = value.extras or {}
        per_frame, sampling = extras.get("per_frame"), extras.get("frames")
        if not isinstance(per_frame, list):
            continue
        if isinstance(sampling, Mapping):
            have = extras.get("n_frames_with_value", len(per_frame))
            missing = f", {len(per_frame) - have} without a value" if have != len(per_frame) else ""
            notes[name] = f"mean over {len(per_frame)} sampled frames{missing}"
        else:
            notes[name] = f"over {len(per_frame)} frames (the metric's own rule)"
    return notes


# --- handlers --------------------------------------------------------------------------------------------------

def describe(video: InputVideo, n_sampled: int) -> str:
    return (f"**Output video** {video.duration_s:.2f} s, {video.frame_count} frames at {video.fps:g} fps, "
            f"{video.size[0]}x{video.size[1]}, {video.codec}. The image metrics score the {n_sampled} frames below "
            "(evenly spaced, first and last included) and give their **mean**; the video metrics read their own "
            "frames. The output image is not used while a video is loaded.")


def strip_items(state: VideoState) -> list[tuple[Any, str]]:
    return [(f.image.pixels, f"#{f.index} · {f.time_s:.2f} s") for f in state.frames]


def load_video(wb: Workbench, state: VideoState, path: str | None) -> tuple[VideoState, str]:
    """Decode the uploaded video (once per file) and its sampled frames; (state, note). Clears the frame selection
    and the mask of a previous video. InputError when the file is not a readable video."""
    if not path:
        state.reset()
        return state, ""
    if state.video is not None and same_file(path, state.video):
        # The video on screen again (e.g. a stored sample opened from Browse): keep its frames, selection and mask.
        state.path = path
        state.frames = state.frames or wb.sampled_frames(state.video)
        return state, describe(state.video, len(state.frames))
    video = wb.load_output(path, "output video")
    if not isinstance(video, InputVideo):
        raise InputError("the output video box holds an image: put images in the output image box, videos here")
    state.reset()
    state.path, state.video = path, video
    state.frames = wb.sampled_frames(video)
    return state, describe(video, len(state.frames))


def same_file(path: str, video: InputVideo) -> bool:
    """Whether the file at `path` holds `video`'s bytes (its content hash, without decoding)."""
    try:
        with open(path, "rb") as fh:
            return hashlib.file_digest(fh, "sha256").hexdigest() == video.sha256
    except OSError:
        return False


def select_frame(state: VideoState, position: int) -> VideoState:
    """Select the strip's `position`-th frame (InputError when there is no such frame)."""
    if not 0 <= position < len(state.frames):
        raise InputError(f"there is no frame at position {position} of the strip (it has {len(state.frames)})")
    state.selected = state.frames[position].index
    return state


def mask_note(state: VideoState) -> str:
    """What the video's mask is and how every frame gets it (shown under the mask)."""
    if state.masks is None:
        return ("no mask of the video yet: draw one on a frame (reused on every frame) or segment each sampled frame "
                "by the subject's name")
    if state.masks.method == "static":
        frame = int(state.masks.params.get("frame", 0))
        fps = state.video.fps if state.video is not None and state.video.fps else 1.0
        return f"**Mask rule:** {STATIC_RULE.format(frame=frame, time=frame / fps)} (source: {state.mask_source})."
    params = state.masks.params
    text = TEXT_RULE.format(n=len(state.masks.masks), text=params.get("text", "?"))
    doubtful = params.get("doubtful") or []
    warn = f" ⚠ doubtful on frame(s) {', '.join(str(d) for d in doubtful)}: check them." if doubtful else ""
    return f"**Mask rule:** {text} (model {params.get('model_id', '?')}).{warn}"


def mask_view(state: VideoState, opacity: float = 0.5) -> Any:
    frame = state.frame(state.selected)
    if frame is None:
        return None
    mask = state.masks.for_frame(frame.index) if state.masks is not None else None
    return overlays.mask_overlay(frame.image, mask, opacity=opacity)


def brush_mask(wb: Workbench, state: VideoState, editor_value: Any) -> VideoState:
    """The brush layer drawn on the selected frame becomes the mask of every frame (`FrameMasks.static`)."""
    frame = state.frame(state.selected)
    if frame is None:
        raise InputError("click a frame of the strip first: the brush draws on the selected frame")
    mask = wb.mask_from_brush(editor_value, frame.image.size)
    if not mask.any():
        raise InputError("the brush layer is empty: paint over the subject on the selected frame first")
    state.masks, state.mask_source = FrameMasks.static(mask, frame.index, name="mask of the output video"), "drawn"
    return state


def name_masks(wb: Workbench, state: VideoState, subject: str | None, *, user: str | None) -> VideoState:
    """A mask per sampled frame from the subject's name (SAM 3)."""
    if state.video is None:
        raise InputError("upload an output video first")
    state.masks, state.mask_source = wb.segment_frames_by_name(state.video, subject, user=user), "text-prompted"
    return state


def explain_frame(wb: Workbench, state: VideoState, sample: Sample, *, user: str | None,
                  progress: Any = None) -> tuple[Any, Any, Any, Any, str, str]:
    """(CP map over reference 1, best match, correspondences, PF attention, title, notes) of the selected frame."""
    frame = state.frame(state.selected)
    if frame is None:
        raise InputError("click a frame of the strip first")
    ex = wb.explain_frame(sample, frame.index, user=user, progress=progress)
    title = f"### Frame {frame.index} ({frame.time_s:.2f} s)"
    notes = "; ".join(ex.notes) if ex.notes else f"this frame: CP {ex.cp:.4f} · PF {ex.pf:.4f}"
    cp_ref = next((m for m in ex.cp_ref if m is not None), None)
    return cp_ref, ex.out_best, ex.lines, ex.pf_attention, title, notes


def metric_choices(wb: Workbench, state: VideoState, chosen: Sequence[str] | None) -> tuple[list, list[str]]:
    """(choices, chosen) of the Score tab's metric list: the image metrics, plus the video metrics while a video is
    loaded (all of them chosen when it arrives; the chosen ones that no longer apply dropped when it goes)."""
    from ..metrics.registry import metrics_for

    specs = metrics_for([], wb.settings, video=has_video(state))
    names = [s.name for s in specs]
    kept = [n for n in (chosen or []) if n in names]
    if has_video(state):
        kept += [s.name for s in specs if s.media == "video" and s.name not in kept]
    return [(s.display_name, s.name) for s in specs], kept


def plot_of(wb: Workbench, state: VideoState, report: ScoreReport | None) -> Any:
    """The per-frame figure of `report` (None when no video or no per-frame values)."""
    if state.video is None or report is None:
        return None
    frame = state.frame(state.selected)
    return frame_series_figure(wb.frame_series(report, state.video),
                               selected_time_s=None if frame is None else frame.time_s, demo=wb.status().is_demo)


# --- wiring ----------------------------------------------------------------------------------------------------

def wire(wb: Workbench, p: VideoPanel, out_video: VideoUpload, out_image: gr.Image, subject: gr.Textbox,
         report: gr.State, sample_of: Callable[..., Sample], sample_inputs: list,
         metrics: gr.CheckboxGroup | None = None) -> None:
    """Connect the panel. `sample_of(*sample_inputs, state)` builds the sample on screen (with the video);
    `report` holds Run's `ScoreReport` (chain `p.after_run` after Run); `metrics` (the metric list) offers the
    video metrics while a video is loaded."""
    explained = [p.cp_map, p.best_map, p.lines, p.pf_map, p.frame_title, p.frame_notes]
    cleared = (None, None, None, None, "Click a frame of the strip to explain it.", "")

    def on_video(state: VideoState, path: str | None, request: gr.Request, progress=gr.Progress()):
        try:
            progress(0.2, desc="decoding the sampled frames")
            state, note = load_video(wb, state, path)
        except WorkbenchError as exc:
            state.reset()
            return (state, gr.Column(visible=True), f"⚠ {exc}", [], None, *cleared, None, None, mask_note(state))
        shown = state.video is not None
        return (state, gr.Column(visible=shown), note, strip_items(state), None, *cleared, None, None,
                mask_note(state))

    loaded = [p.state, p.box, p.note, p.strip, p.plot, *explained, p.editor, p.mask_view, p.mask_note]
    loading = out_video.change(on_video, [p.state, out_video], loaded, api_name="video_load")
    if metrics is not None:
        def on_metrics(state: VideoState, chosen):
            choices, value = metric_choices(wb, state, chosen)
            return gr.CheckboxGroup(choices=choices, value=value)
        loading.then(on_metrics, [p.state, metrics], [metrics], show_progress="hidden")
    # One output at a time: a new video replaces the output image, a new output image replaces the video.
    out_video.upload(lambda: None, None, [out_image], show_progress="hidden")
    out_image.upload(lambda: None, None, [out_video], show_progress="hidden")

    def on_select(state: VideoState, report_value, evt: gr.SelectData):
        try:
            select_frame(state, int(evt.index if not isinstance(evt.index, (list, tuple)) else evt.index[0]))
        except WorkbenchError as exc:
            return state, gr.update(), gr.update(), gr.update(), f"⚠ {exc}", gr.update()
        frame = state.frame(state.selected)
        editor = {"background": frame.image.pixels, "layers": [], "composite": None}
        return (state, editor, mask_view(state), plot_of(wb, state, report_value),
                f"### Frame {frame.index} ({frame.time_s:.2f} s)", mask_note(state))

    @gpu
    def on_explain(*args):
        # Positional inputs only (the Score tab's sample inputs vary): the user comes from the request context.
        *inputs, state = args
        try:
            sample = sample_of(*inputs, state)
            return explain_frame(wb, state, sample, user=user_of(LocalContext.request.get(None)))
        except WorkbenchError as exc:
            return None, None, None, None, gr.update(), f"⚠ {exc}"

    p.strip.select(on_select, [p.state, report], [p.state, p.editor, p.mask_view, p.plot, p.frame_title,
                                                  p.mask_note], api_name="video_select")\
        .then(on_explain, [*sample_inputs, p.state], explained, concurrency_limit=2, api_name="video_explain")

    def on_brush(state: VideoState, editor):
        try:
            brush_mask(wb, state, editor)
        except WorkbenchError as exc:
            return state, mask_view(state), f"⚠ {exc}"
        return state, mask_view(state), mask_note(state)

    @gpu
    def on_by_name(state: VideoState, name: str | None, request: gr.Request, progress=gr.Progress()):
        try:
            progress(0.1, desc=f"segmenting '{name}' in each sampled frame")
            name_masks(wb, state, name, user=user_of(request))
        except WorkbenchError as exc:
            return state, mask_view(state), f"⚠ {exc}"
        return state, mask_view(state), mask_note(state)

    def on_clear(state: VideoState):
        state.masks, state.mask_source = None, None
        return state, mask_view(state), mask_note(state)

    masked = [p.state, p.mask_view, p.mask_note]
    p.use_brush.click(on_brush, [p.state, p.editor], masked, api_name="video_mask_brush")
    p.by_name.click(on_by_name, [p.state, subject], masked, concurrency_limit=2, api_name="video_mask_by_name")
    p.clear_mask.click(on_clear, [p.state], masked, api_name="video_mask_clear")
    p.after_run = (lambda state, rep: plot_of(wb, state, rep), [p.state, report], [p.plot])
