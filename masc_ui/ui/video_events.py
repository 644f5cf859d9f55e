"""The Score tab's video events (`video_panel` holds the layout and the handlers' logic): one output at a time (a new
video replaces the output image and the other way round, each a new sample), loading the video into the strip,
selecting a frame, the video's mask (brush, by name, offered, undoable), and the per-frame plot after Run and Save.
Each mask change is followed by the tab's "out of date" check."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gradio as gr

from ..errors import WorkbenchError
from ..workbench import Workbench
from ..workbench.masks import MaskSession
from . import score_actions as act
from . import video_panel as vp
from .feedback import warn
from .gpu import gpu
from .users import user_of


def plot_io(wb: Workbench, tab: Any) -> tuple:
    """(handler, inputs, outputs) drawing the per-frame plot of the report on screen (chain it after Run and Save)."""

    def draw_frame_plot(session: MaskSession, report):
        return vp.plot_update(vp.plot_of(wb, session.video, report))

    return draw_frame_plot, [tab.masks.session, tab.report], [tab.video.plot_box, tab.video.plot]


class VideoEvents:
    """The handlers of the Score tab's video box and panel (`tab`: a `score_tab.ScoreTab`); each answers with a dict
    keyed by the tab's components."""

    def __init__(self, wb: Workbench, tab: Any) -> None:
        self.wb, self.tab, self.p = wb, tab, tab.video
        self.cleared = act.on_new_images(tab)
        # ZeroGPU runs it on a GPU (`gpu`): wrapped per instance, under its own name (the endpoint's name).
        self.on_by_name = gpu(self.on_by_name)

    def on_new_video(self, s: MaskSession, dataset: str | None):
        return {**self.cleared(s, dataset), self.tab.out_image: None}

    def mask_outputs(self, vs, message: str = "") -> dict:
        return {
            self.p.view: vp.mask_view(vs),
            self.p.rule: vp.mask_rule(vs),
            self.p.message: message,
            self.p.proposal_box: gr.update(visible=vs.pending is not None),
            self.p.proposal_view: vp.proposal_view(vs),
        }

    def on_video(self, s: MaskSession, path: str | None, progress=gr.Progress()):
        """A file in the video box: its strip, or, when it is refused, the reason under the box and the box emptied
        (so that another upload works at once); the emptied box's own change then says the reason again."""
        vs = s.video
        try:
            progress(0.2, desc="decoding the sampled frames")
            note = vp.load_video(self.wb, vs, path)
        except WorkbenchError as exc:
            vs.reset()
            vs.refused = warn(exc)
            return {
                self.p.box: gr.Column(visible=False),
                self.p.plot_box: gr.Column(visible=False),
                self.p.note: "",
                self.p.strip: [],
                self.p.plot: None,
                self.p.frame_title: "",
                self.p.editor: None,
                **self.mask_outputs(vs),
                self.tab.video_notes: vs.refused,
                self.tab.out_video: None,
            }
        frame = vs.frame(vs.selected)
        editor = None if frame is None else {"background": frame.image.pixels, "layers": [], "composite": None}
        return {
            self.p.box: gr.Column(visible=vs.loaded),
            self.p.plot_box: gr.Column(visible=False),
            self.p.note: note,
            self.p.strip: vp.strip_items(vs),
            self.p.plot: None,
            self.p.frame_title: vp.frame_label(vs),
            self.p.editor: editor,
            **self.mask_outputs(vs),
            self.tab.video_notes: vp.refusal_note(vs, path),
        }

    def on_metrics(self, s: MaskSession, chosen):
        choices, value = vp.metric_choices(self.wb, s.video, chosen)
        return gr.CheckboxGroup(choices=choices, value=value)

    def on_select(self, s: MaskSession, report, evt: gr.SelectData):
        vs = s.video
        try:
            vp.select_frame(vs, int(evt.index if not isinstance(evt.index, (list, tuple)) else evt.index[0]))
        except WorkbenchError as exc:
            return {self.p.message: warn(exc)}
        frame = vs.frame(vs.selected)
        plot_box, plot = vp.plot_update(vp.plot_of(self.wb, vs, report))
        return {
            self.p.frame_title: vp.frame_label(vs),
            self.p.editor: {"background": frame.image.pixels, "layers": [], "composite": None},
            self.p.view: vp.mask_view(vs),
            self.p.proposal_view: vp.proposal_view(vs),
            self.p.plot_box: plot_box,
            self.p.plot: plot,
            self.p.message: "",
        }

    def on_brush(self, s: MaskSession, editor):
        try:
            msg = vp.brush_mask(self.wb, s.video, editor)
        except WorkbenchError as exc:
            msg = warn(exc)
        return self.mask_outputs(s.video, msg)

    def on_by_name(self, s: MaskSession, name: str | None, request: gr.Request, progress=gr.Progress()):
        try:
            progress(0.1, desc=f"segmenting '{name}' in each sampled frame")
            msg = vp.name_masks(self.wb, s.video, name, user=user_of(request))
            if s.video.pending is not None:
                warn("the masks by name were not applied: see 'Proposed mask'")
        except WorkbenchError as exc:
            msg = warn(exc)
        return self.mask_outputs(s.video, msg)

    def step(self, name: str, change: Callable[[Any], str]) -> Callable[[MaskSession], dict]:
        """A handler called `name` (its endpoint's name) that applies `change` to the session's video masks."""

        def handler(s: MaskSession):
            return self.mask_outputs(s.video, change(s.video))

        handler.__name__ = name
        return handler


def wire(wb: Workbench, tab: Any, new_images: list, fresh: Callable[[Any], None]) -> None:
    """Connect the video box and panel of `tab` (a `score_tab.ScoreTab`). `new_images`: the outputs of
    `score_actions.on_new_images`; `fresh(event)`: chains the "out of date" check after `event`."""
    p, session = tab.video, tab.masks.session
    events = VideoEvents(wb, tab)

    for event in (tab.out_video.upload, tab.out_video.clear):
        event(events.on_new_video, [session, tab.dataset], [*new_images, tab.out_image], show_progress="hidden")

    # In the browser (no round trip that could come back after a video uploaded meanwhile): a new image empties the
    # video box, whose change event then forgets the video.
    tab.out_image.upload(None, None, [tab.out_video], js="() => null", show_progress="hidden")

    masked = [p.view, p.rule, p.message, p.proposal_box, p.proposal_view]

    loaded = [
        p.box,
        p.plot_box,
        p.note,
        p.strip,
        p.plot,
        p.frame_title,
        p.editor,
        *masked,
        tab.video_notes,
        tab.out_video,
    ]
    tab.out_video.change(
        events.on_video, [session, tab.out_video], loaded, api_name="video_load", concurrency_limit=2
    ).then(events.on_metrics, [session, tab.metrics], [tab.metrics], show_progress="hidden")

    p.strip.select(
        events.on_select,
        [session, tab.report],
        [p.frame_title, p.editor, p.view, p.proposal_view, p.plot_box, p.plot, p.message],
        api_name="video_select",
        trigger_mode="always_last",
    )

    changes = [
        p.use_brush.click(events.on_brush, [session, p.editor], masked, api_name="video_mask_brush"),
        p.by_name.click(
            events.on_by_name, [session, tab.subject], masked, concurrency_limit=2, api_name="video_mask_by_name"
        ),
        p.apply.click(
            events.step("video_mask_apply", lambda vs: vs.apply_pending()),
            [session],
            masked,
            api_name="video_mask_apply",
        ),
        p.undo.click(
            events.step("video_mask_undo", lambda vs: vs.undo()), [session], masked, api_name="video_mask_undo"
        ),
        p.clear.click(
            events.step("video_mask_clear", lambda vs: vs.clear()), [session], masked, api_name="video_mask_clear"
        ),
    ]
    for event in changes:
        fresh(event)
    p.discard.click(
        events.step("video_mask_discard", lambda vs: vs.discard_pending()),
        [session],
        masked,
        api_name="video_mask_discard",
    )
