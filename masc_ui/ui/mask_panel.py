"""The mask panel of the Score tab: one target image at a time (a reference or the output), three ways to
mask it (brush, Segment Anything clicks, the subject's name), the current mask always shown as an overlay."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gradio as gr
import numpy as np

from .. import overlays
from ..errors import WorkbenchError
from ..imaging import InputImage
from ..workbench import Workbench
from ..workbench.masks import MaskSession, target_names
from .gpu import gpu
from .users import user_of

MODES = ["brush", "SAM clicks", "subject name"]
CLICK_MODES = ["positive", "negative", "box"]


@dataclass
class MaskPanel:
    session: gr.State
    target: gr.Radio
    mode: gr.Radio
    editor: gr.ImageEditor
    use_brush: gr.Button
    sam_image: gr.Image
    click_mode: gr.Radio
    undo: gr.Button
    clear_clicks: gr.Button
    candidate: gr.Radio
    by_name: gr.Button
    view: gr.Image
    opacity: gr.Slider
    clear_mask: gr.Button
    message: gr.Markdown
    brush_box: gr.Group
    sam_box: gr.Group
    name_box: gr.Group
    refresh: Any = None
    """After `wire`: handler (session, target, opacity, ref, extra, out) -> outputs of `render_outputs`."""


def image_paths(ref_image: str | None, extra_refs: list | None, out_image: str | None) -> tuple[list, str | None]:
    """Reference paths (the main upload first, then the extra ones) and the output path."""
    refs = [ref_image] if ref_image else []
    refs += [getattr(f, "name", f) for f in (extra_refs or [])]
    return refs, out_image


def session_image(wb: Workbench, session: MaskSession, path: str | None, name: str) -> InputImage:
    """The upload at `path`, decoded once per session (`MaskSession.uploads`); InputError when missing or bad."""
    if path is None:
        return wb.load_image(None, name)
    return session.uploads.get(path, name, wb.load_image)


def target_image(wb: Workbench, session: MaskSession, target: str, ref_image, extra_refs, out_image) -> InputImage:
    refs, out = image_paths(ref_image, extra_refs, out_image)
    if target == "out":
        return session_image(wb, session, out, "output image")
    i = int(target[3:])
    return session_image(wb, session, refs[i] if i < len(refs) else None, f"reference image {i + 1}")


def build() -> MaskPanel:
    session = gr.State(MaskSession())
    with gr.Row():
        target = gr.Radio(choices=[(lbl, key) for lbl, key in target_names(1)], value="ref0",
                          label="Mask of", elem_id="mask-target", scale=2)
        mode = gr.Radio(MODES, value="brush", label="Mask with", elem_id="mask-mode", scale=2)
    with gr.Row():
        with gr.Column(scale=3):
            with gr.Group(visible=True) as brush_box:
                editor = gr.ImageEditor(type="numpy", label="Brush: paint the subject, then 'Use brush as mask'",
                                        brush=gr.Brush(colors=["#ff2a78"], color_mode="fixed", default_size=24),
                                        eraser=gr.Eraser(default_size=24), layers=False, transforms=(),
                                        sources=(), elem_id="mask-editor", height=420)
                use_brush = gr.Button("Use brush as mask", elem_id="mask-use-brush")
            with gr.Group(visible=False) as sam_box:
                sam_image = gr.Image(label="Segment Anything: click on the image", interactive=False,
                                     elem_id="sam-image", height=420, buttons=[])
                with gr.Row():
                    click_mode = gr.Radio(CLICK_MODES, value="positive", label="Click adds",
                                          info="box = two clicks on opposite corners", elem_id="sam-click-mode")
                    candidate = gr.Radio(choices=[], label="Candidate masks", elem_id="sam-candidate")
                with gr.Row():
                    undo = gr.Button("Undo click", elem_id="sam-undo", size="sm")
                    clear_clicks = gr.Button("Clear clicks", elem_id="sam-clear", size="sm")
            with gr.Group(visible=False) as name_box:
                by_name = gr.Button("Segment by the subject's name", elem_id="mask-by-name")
        with gr.Column(scale=2):
            view = gr.Image(label="Current mask", interactive=False, elem_id="mask-view", height=300, buttons=[])
            opacity = gr.Slider(0.0, 1.0, value=0.5, step=0.05, label="Overlay opacity", elem_id="mask-opacity")
            clear_mask = gr.Button("Clear this mask", size="sm", elem_id="mask-clear")
            message = gr.Markdown(elem_id="mask-message")
    return MaskPanel(session, target, mode, editor, use_brush, sam_image, click_mode, undo, clear_clicks, candidate,
                     by_name, view, opacity, clear_mask, message, brush_box, sam_box, name_box)


def wire(wb: Workbench, p: MaskPanel, ref_image: gr.Image, extra_refs: gr.File, out_image: gr.Image,
         subject: gr.Textbox) -> None:
    images = [ref_image, extra_refs, out_image]
    shown = [p.view, p.sam_image, p.candidate, p.message]

    def render(session: MaskSession, target: str, opacity: float, ref, extra, out, message: str = ""):
        try:
            img = target_image(wb, session, target, ref, extra, out)
        except WorkbenchError as exc:
            return None, None, gr.update(choices=[], value=None), f"⚠ {exc}"
        mask = session.masks.get(target)
        prompts = session.prompts.get(target)
        sam_view = overlays.mask_overlay(img, mask, opacity=opacity)
        choices, chosen = [], None
        if prompts is not None:
            sam_view = overlays.draw_prompts(sam_view, prompts.points, prompts.box, prompts.pending_corner)
            choices = [(f"{i + 1} (score {s:.2f})", i) for i, s in enumerate(prompts.scores)]
            chosen = prompts.chosen if choices else None
        src = session.sources.get(target)
        note = message or (f"mask source: {src}, {int(mask.sum())} px" if mask is not None else "no mask yet")
        return overlays.mask_overlay(img, mask, opacity=opacity), sam_view, gr.update(choices=choices, value=chosen), note

    def on_target(session, target, opacity, ref, extra, out):
        try:
            bg = target_image(wb, session, target, ref, extra, out)
            editor = {"background": bg.pixels, "layers": [], "composite": None}
        except WorkbenchError:
            editor = None
        return (editor, *render(session, target, opacity, ref, extra, out))

    def on_images(session, target, opacity, ref, extra, out):
        refs, out_path = image_paths(ref, extra, out)
        session.uploads.keep_only([*refs, out_path])
        choices = [(lbl, key) for lbl, key in target_names(max(1, len(refs)))]
        keys = [k for _, k in choices]
        for k in list(session.masks):
            if k not in keys:
                session.clear(k)
        target = target if target in keys else "ref0"
        return (gr.update(choices=choices, value=target), *on_target(session, target, opacity, ref, extra, out))

    def on_mode(mode):
        return gr.update(visible=mode == "brush"), gr.update(visible=mode == "SAM clicks"), \
            gr.update(visible=mode == "subject name")

    def on_brush(session: MaskSession, editor, target, opacity, ref, extra, out):
        try:
            img = target_image(wb, session, target, ref, extra, out)
            mask = wb.mask_from_brush(editor, img.size)
            if not mask.any():
                return (session, *render(session, target, opacity, ref, extra, out,
                                          "⚠ the brush layer is empty: paint over the subject first"))
            session.set_mask(target, mask, "drawn")
            return (session, *render(session, target, opacity, ref, extra, out, f"brush mask: {int(mask.sum())} px"))
        except WorkbenchError as exc:
            return (session, *render(session, target, opacity, ref, extra, out, f"⚠ {exc}"))

    @gpu
    def predictor(request: gr.Request | None):
        user = user_of(request)
        return lambda image, points, box: wb.sam_predict(image, points, box, user=user)

    def on_click(session: MaskSession, target, click_mode, opacity, ref, extra, out, evt: gr.SelectData,
                 request: gr.Request):
        try:
            img = target_image(wb, session, target, ref, extra, out)
            x, y = evt.index[0], evt.index[1]
            msg = session.click(target, img, float(x), float(y), click_mode, predictor(request))
        except WorkbenchError as exc:
            msg = f"⚠ {exc}"
        return (session, *render(session, target, opacity, ref, extra, out, msg))

    @gpu
    def on_undo(session: MaskSession, target, opacity, ref, extra, out, request: gr.Request):
        try:
            msg = session.undo(target, target_image(wb, session, target, ref, extra, out), predictor(request))
        except WorkbenchError as exc:
            msg = f"⚠ {exc}"
        return (session, *render(session, target, opacity, ref, extra, out, msg))

    def on_clear_clicks(session: MaskSession, target, opacity, ref, extra, out):
        session.prompts.pop(target, None)
        if session.sources.get(target) == "sam":
            session.set_mask(target, None, "sam")
        return (session, *render(session, target, opacity, ref, extra, out, "clicks cleared"))

    def on_candidate(session: MaskSession, index, target, opacity, ref, extra, out):
        if index is None or target not in session.prompts or not session.prompts[target].candidates:
            return (session, *render(session, target, opacity, ref, extra, out))
        try:
            msg = session.choose(target, int(index))
        except WorkbenchError as exc:
            msg = f"⚠ {exc}"
        return (session, *render(session, target, opacity, ref, extra, out, msg))

    @gpu
    def on_by_name(session: MaskSession, target, name, opacity, ref, extra, out, request: gr.Request,
                   progress=gr.Progress()):
        try:
            img = target_image(wb, session, target, ref, extra, out)
            progress(0.1, desc=f"segmenting '{name}'")
            seg = wb.segment_by_name(img, name, user=user_of(request))
            session.set_mask(target, seg.mask, "text-prompted")
            msg = f"'{name}': {seg.n_instances} instance(s), {seg.fraction:.0%} of the image"
            if seg.doubtful:
                msg = f"⚠ doubtful mask: {seg.reason}. Check it, or correct it with the brush or SAM clicks."
        except WorkbenchError as exc:
            msg = f"⚠ {exc}"
        return (session, *render(session, target, opacity, ref, extra, out, msg))

    def on_clear_mask(session: MaskSession, target, opacity, ref, extra, out):
        session.clear(target)
        return (session, *render(session, target, opacity, ref, extra, out, "mask cleared"))

    common = [p.target, p.opacity, *images]
    for comp in (ref_image, out_image):
        comp.upload(_clear_for(comp is out_image), [p.session, ref_image, extra_refs], [p.session])\
            .then(on_images, [p.session, *common], [p.target, p.editor, *shown])
        comp.clear(on_images, [p.session, *common], [p.target, p.editor, *shown])
    # A user's new or removed extra references invalidate every extra reference's mask and clicks (their order
    # and images changed); programmatic changes (opening a stored sample) bring their own masks and only re-render.
    for event in (extra_refs.upload, extra_refs.clear):
        event(_clear_extra_refs, [p.session], [p.session])\
            .then(on_images, [p.session, *common], [p.target, p.editor, *shown])
    extra_refs.change(on_images, [p.session, *common], [p.target, p.editor, *shown])
    p.target.input(on_target, [p.session, *common], [p.editor, *shown])
    p.opacity.release(render, [p.session, *common], shown)
    p.mode.change(on_mode, [p.mode], [p.brush_box, p.sam_box, p.name_box])
    p.use_brush.click(on_brush, [p.session, p.editor, *common], [p.session, *shown])
    p.sam_image.select(on_click, [p.session, p.target, p.click_mode, p.opacity, *images], [p.session, *shown],
                       concurrency_limit=4)
    p.undo.click(on_undo, [p.session, *common], [p.session, *shown])
    p.clear_clicks.click(on_clear_clicks, [p.session, *common], [p.session, *shown])
    p.candidate.input(on_candidate, [p.session, p.candidate, *common], [p.session, *shown])
    p.by_name.click(on_by_name, [p.session, p.target, subject, p.opacity, *images], [p.session, *shown])
    p.clear_mask.click(on_clear_mask, [p.session, *common], [p.session, *shown])
    p.refresh = on_images


def _clear_for(is_output: bool):
    """A fresh upload invalidates that image's mask and clicks (the output's, or reference 1's)."""
    def clear(session: MaskSession, *_: Any) -> MaskSession:
        session.clear("out" if is_output else "ref0")
        return session
    return clear


def _clear_extra_refs(session: MaskSession) -> MaskSession:
    for key in [k for k in {*session.masks, *session.prompts} if k.startswith("ref") and k != "ref0"]:
        session.clear(key)
    return session


def refresh_io(p: MaskPanel, ref_image, extra_refs, out_image) -> tuple[list[Any], list[Any]]:
    """(inputs, outputs) of `p.refresh`, for handlers elsewhere that replace the images or masks."""
    return ([p.session, p.target, p.opacity, ref_image, extra_refs, out_image],
            [p.target, p.editor, p.view, p.sam_image, p.candidate, p.message])


def masks_for_sample(session: MaskSession, n_refs: int) -> tuple[list[np.ndarray | None], np.ndarray | None]:
    return [session.masks.get(f"ref{i}") for i in range(n_refs)], session.masks.get("out")
