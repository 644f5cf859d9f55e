"""The mask panel of the Score tab: one target image at a time (a reference or the output), three ways to
mask it (brush, Segment Anything clicks, the subject's name), the current mask always shown as an overlay.

Nothing replaces a mask silently (`MaskSession`): a Segment Anything or subject-name result that would replace a
mask made another way, or a doubtful one, is shown as a proposal with Apply / Discard; every change can be undone
("Undo mask change", per image)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import gradio as gr
import numpy as np

from .. import overlays
from ..errors import InputError, WorkbenchError
from ..imaging import InputImage
from ..workbench import Workbench
from ..workbench.masks import MaskSession, target_names
from .editor_blobs import BrushEditor
from .feedback import warn
from .gpu import gpu
from .users import user_of

MODES = ["brush", "SAM clicks", "subject name"]
CLICK_MODES = ["positive", "negative", "box"]
BRUSH_HELP = (
    "**Brush:** pick the brush in the editor's toolbar, paint over the subject, then press **Use brush as mask**."
)
NAME_HELP = (
    "**Subject name:** SAM 3 segments every instance of the *Subject name* typed above. A doubtful result "
    "(nothing found, or very small) is only proposed: check it, then apply or discard it."
)


@dataclass
class MaskPanel:
    session: gr.State
    target: gr.Radio
    mode: gr.Radio
    editor: BrushEditor
    use_brush: gr.Button
    sam_image: gr.Image
    click_mode: gr.Radio
    undo: gr.Button
    clear_clicks: gr.Button
    candidate: gr.Radio
    threshold: gr.Slider
    by_name: gr.Button
    view: gr.Image
    opacity: gr.Slider
    undo_mask: gr.Button
    clear_mask: gr.Button
    proposal_box: gr.Group
    proposal_view: gr.Image
    apply: gr.Button
    discard: gr.Button
    message: gr.Markdown
    brush_box: gr.Group
    sam_box: gr.Group
    name_box: gr.Group
    refresh: Any = None
    """After `wire`: handler (session, target, opacity, ref, extra, out) -> outputs of `refresh_io`."""
    changed: list = field(default_factory=list)
    """After `wire`: the events of the mask tools that change a mask."""


def image_paths(ref_image: str | None, extra_refs: list | None, out_image: str | None) -> tuple[list, str | None]:
    """Reference paths (the main upload first, then the extra ones) and the output path."""
    refs = [ref_image] if ref_image else []
    refs += [getattr(f, "name", f) for f in (extra_refs or [])]
    return refs, out_image


def session_image(wb: Workbench, session: MaskSession, path: str | None, name: str) -> InputImage:
    """The upload at `path`, decoded once per session (`MaskSession.uploads`); InputError when missing or bad."""
    if path is None:
        return wb.scoring.load_image(None, name)
    return session.uploads.get(path, name, wb.scoring.load_image, wb.settings.max_session_pixels)


def release_on_unload(app: gr.Blocks) -> Callable[[gr.Request], None]:
    """Drop the decoded images of a page session's `MaskSession`s when the page closes (Gradio's unload event):
    Gradio keeps a closed session's state an hour for a reload, the decoded pixels are not worth keeping (a reload
    decodes them again from the uploads). Returns the handler: every role's pages close, so it belongs among
    `roles.guard_endpoints`' `for_raters`."""

    def end_image_session(request: gr.Request) -> None:
        holder = getattr(app, "state_holder", None)
        state = holder.session_data.get(request.session_hash) if holder is not None else None
        for value in list(getattr(state, "state_data", {}).values()):
            if isinstance(value, MaskSession):
                value.uploads.clear()

    app.unload(end_image_session)
    return end_image_session


def target_image(wb: Workbench, session: MaskSession, target: str, ref_image, extra_refs, out_image) -> InputImage:
    refs, out = image_paths(ref_image, extra_refs, out_image)
    if target == "out" and out is None and session.video.loaded:
        raise InputError("the output is a video: draw its mask in 'Mask of the output video', under the frame strip")
    if target == "out":
        return session_image(wb, session, out, "output image")
    i = int(target[3:])
    return session_image(wb, session, refs[i] if i < len(refs) else None, f"reference image {i + 1}")


def images_on_screen(
    wb: Workbench, session: MaskSession, ref_image, extra_refs, out_image
) -> tuple[dict[str, InputImage | None], dict[str, list[str]]]:
    """(target -> decoded image or None, target -> what to tell the user about it): each image's notes (e.g.
    transparency flattened) and why an upload is refused (e.g. too small to judge)."""
    refs, out = image_paths(ref_image, extra_refs, out_image)
    found: dict[str, InputImage | None] = {}
    notes: dict[str, list[str]] = {}
    most = wb.settings.max_references
    for key, path, name in [(f"ref{i}", r, f"reference image {i + 1}") for i, r in enumerate(refs)] + [
        ("out", out, "output image")
    ]:
        if path is None:
            found[key] = None
            continue
        if key.startswith("ref") and int(key[3:]) >= most:
            found[key] = None
            notes[key] = [f"⚠ {name} is not taken: {wb.scoring.too_many_references(len(refs))}"]
            continue
        try:
            found[key] = session_image(wb, session, path, name)
            notes[key] = list(found[key].notes)
        except WorkbenchError as exc:
            found[key] = None
            notes[key] = [f"⚠ {exc}"]
    return found, notes


def masks_for_sample(
    session: MaskSession, refs: list[InputImage], out: InputImage | None
) -> tuple[list[np.ndarray | None], np.ndarray | None]:
    """The masks on screen that belong to these images (a mask made on another image is never used)."""
    return (
        [session.mask_of(f"ref{i}", r) for i, r in enumerate(refs)],
        None if out is None else session.mask_of("out", out),
    )


def build(wb: Workbench) -> MaskPanel:
    session = gr.State(MaskSession())
    with gr.Row():
        target = gr.Radio(
            choices=[(lbl, key) for lbl, key in target_names(1)],
            value="ref0",
            label="Mask of",
            elem_id="mask-target",
            scale=2,
            min_width=220,
        )
        mode = gr.Radio(MODES, value="brush", label="Mask with", elem_id="mask-mode", scale=2, min_width=220)
    with gr.Row():
        with gr.Column(scale=3, min_width=300):
            with gr.Group(visible=True) as brush_box:
                gr.Markdown(BRUSH_HELP, elem_id="mask-brush-help", padding=True)
                editor = BrushEditor(
                    type="numpy",
                    show_label=False,
                    label="Brush layer",
                    brush=gr.Brush(colors=["#ff2a78"], color_mode="fixed", default_size=24),
                    eraser=gr.Eraser(default_size=24),
                    layers=False,
                    transforms=(),
                    sources=(),
                    elem_id="mask-editor",
                    height=420,
                )
                use_brush = gr.Button("Use brush as mask", elem_id="mask-use-brush")
            with gr.Group(visible=False) as sam_box:
                sam_image = gr.Image(
                    label="Segment Anything: click on the image",
                    interactive=False,
                    elem_id="sam-image",
                    height=420,
                    buttons=[],
                )
                with gr.Row():
                    click_mode = gr.Radio(
                        CLICK_MODES,
                        value="positive",
                        label="Click adds",
                        info="box = two clicks on opposite corners",
                        elem_id="sam-click-mode",
                    )
                    candidate = gr.Radio(choices=[], label="Candidate masks", elem_id="sam-candidate")
                with gr.Row():
                    undo = gr.Button("Undo click", elem_id="sam-undo", size="sm")
                    clear_clicks = gr.Button("Clear clicks", elem_id="sam-clear", size="sm")
            with gr.Group(visible=False) as name_box:
                gr.Markdown(NAME_HELP, elem_id="mask-name-help", padding=True)
                threshold = gr.Slider(
                    0.0,
                    1.0,
                    value=wb.settings.text_seg_threshold,
                    step=0.05,
                    label="Score threshold",
                    info="instances scoring above it are kept; lower it when nothing is found",
                    elem_id="mask-threshold",
                )
                by_name = gr.Button("Segment by the subject's name", elem_id="mask-by-name")
        with gr.Column(scale=2, min_width=260):
            view = gr.Image(label="Current mask", interactive=False, elem_id="mask-view", height=300, buttons=[])
            opacity = gr.Slider(0.0, 1.0, value=0.5, step=0.05, label="Overlay opacity", elem_id="mask-opacity")
            with gr.Row():
                undo_mask = gr.Button("Undo mask change", size="sm", elem_id="mask-undo")
                clear_mask = gr.Button("Clear this mask", size="sm", elem_id="mask-clear")
            message = gr.Markdown(elem_id="mask-message", elem_classes=["action-message"])
            with gr.Group(visible=False, elem_id="mask-proposal") as proposal_box:
                proposal_view = gr.Image(
                    label="Proposed mask (not applied)",
                    interactive=False,
                    height=220,
                    elem_id="mask-proposal-view",
                    buttons=[],
                )
                with gr.Row():
                    apply = gr.Button("Apply proposed mask", variant="primary", size="sm", elem_id="mask-apply")
                    discard = gr.Button("Discard", size="sm", elem_id="mask-discard")
    return MaskPanel(
        session,
        target,
        mode,
        editor,
        use_brush,
        sam_image,
        click_mode,
        undo,
        clear_clicks,
        candidate,
        threshold,
        by_name,
        view,
        opacity,
        undo_mask,
        clear_mask,
        proposal_box,
        proposal_view,
        apply,
        discard,
        message,
        brush_box,
        sam_box,
        name_box,
    )


class MaskEvents:
    """The mask panel's event handlers: each answers with a dict keyed by the panel's components (`render`'s
    outputs, and the session where it changes)."""

    def __init__(self, wb: Workbench, p: MaskPanel) -> None:
        self.wb = wb
        self.p = p
        # ZeroGPU runs these on a GPU (`gpu`): wrapped per instance, under their own names (the endpoints' names).
        self.predictor = gpu(self.predictor)
        self.on_undo = gpu(self.on_undo)
        self.on_by_name = gpu(self.on_by_name)

    def render(self, session: MaskSession, target: str, opacity: float, ref, extra, out, message: str = ""):
        try:
            img = target_image(self.wb, session, target, ref, extra, out)
        except WorkbenchError as exc:
            return {
                self.p.view: None,
                self.p.sam_image: None,
                self.p.candidate: gr.update(choices=[], value=None),
                self.p.message: f"⚠ {exc}",
                self.p.proposal_box: gr.update(visible=False),
                self.p.proposal_view: None,
            }
        mask = session.mask_of(target, img)
        prompts = session.prompts.get(target)
        sam_view = overlays.mask_overlay(img, mask, opacity=opacity)
        choices, chosen = [], None
        if prompts is not None:
            sam_view = overlays.draw_prompts(sam_view, prompts.points, prompts.box, prompts.pending_corner)
            choices = [(f"{i + 1} (score {s:.2f})", i) for i, s in enumerate(prompts.scores)]
            chosen = prompts.chosen if choices else None
        src = session.sources.get(target)
        note = message or (f"mask source: {src}, {int(mask.sum()):,} px" if mask is not None else "no mask yet")
        proposal = session.pending.get(target)
        if proposal is not None and not message:  # why the proposal below waits, also when coming back to it
            note = f"{note}; {proposal.why}"
        proposed = (
            None
            if proposal is None
            else overlays.mask_overlay(img, proposal.mask, opacity=opacity, color=(40, 140, 255))
        )
        return {
            self.p.view: overlays.mask_overlay(img, mask, opacity=opacity),
            self.p.sam_image: sam_view,
            self.p.candidate: gr.update(choices=choices, value=chosen),
            self.p.message: note,
            self.p.proposal_box: gr.update(visible=proposal is not None),
            self.p.proposal_view: proposed,
        }

    def on_target(self, session, target, opacity, ref, extra, out):
        try:
            bg = target_image(self.wb, session, target, ref, extra, out)
            editor = {"background": bg.pixels, "layers": [], "composite": None}
        except WorkbenchError:
            editor = None
        return {self.p.editor: editor, **self.render(session, target, opacity, ref, extra, out)}

    def on_images(self, session: MaskSession, target, opacity, ref, extra, out):
        found, _ = images_on_screen(self.wb, session, ref, extra, out)
        session.uploads.keep_only([*image_paths(ref, extra, out)[0], out])
        session.keep_for({k: (None if img is None else img.sha256) for k, img in found.items()})
        refs, _ = image_paths(ref, extra, out)
        choices = [(lbl, key) for lbl, key in target_names(max(1, len(refs)))]
        keys = [k for _, k in choices]
        if target in keys:  # the value is left alone: the user may have picked another target meanwhile
            return {
                self.p.session: session,
                self.p.target: gr.update(choices=choices),
                **self.on_target(session, target, opacity, ref, extra, out),
            }
        return {
            self.p.session: session,
            self.p.target: gr.update(choices=choices, value="ref0"),
            **self.on_target(session, "ref0", opacity, ref, extra, out),
        }

    def on_mode(self, mode):
        return {
            self.p.brush_box: gr.update(visible=mode == "brush"),
            self.p.sam_box: gr.update(visible=mode == "SAM clicks"),
            self.p.name_box: gr.update(visible=mode == "subject name"),
        }

    def on_brush(self, session: MaskSession, editor, target, opacity, ref, extra, out):
        try:
            img = target_image(self.wb, session, target, ref, extra, out)
            mask = self.wb.segmentation.mask_from_brush(editor, img.size)
            if not mask.any():
                empty = warn("the brush layer is empty: paint over the subject first")
                return {self.p.session: session, **self.render(session, target, opacity, ref, extra, out, empty)}
            before = session.sources.get(target)
            session.set_mask(target, mask, "drawn", img)
            replaced = f"; it replaced the {before} mask ('Undo mask change' brings it back)" if before else ""
            done = f"brush mask: {int(mask.sum()):,} px{replaced}"
            return {self.p.session: session, **self.render(session, target, opacity, ref, extra, out, done)}
        except WorkbenchError as exc:
            return {self.p.session: session, **self.render(session, target, opacity, ref, extra, out, warn(exc))}

    def predictor(self, request: gr.Request | None):
        user = user_of(request)
        return lambda image, points, box: self.wb.segmentation.sam_predict(image, points, box, user=user)

    def on_click(
        self,
        session: MaskSession,
        target,
        click_mode,
        opacity,
        ref,
        extra,
        out,
        evt: gr.SelectData,
        request: gr.Request,
    ):
        try:
            img = target_image(self.wb, session, target, ref, extra, out)
            x, y = evt.index[0], evt.index[1]
            msg = session.click(target, img, float(x), float(y), click_mode, self.predictor(request))
        except WorkbenchError as exc:
            msg = warn(exc)
        return {self.p.session: session, **self.render(session, target, opacity, ref, extra, out, msg)}

    def on_undo(self, session: MaskSession, target, opacity, ref, extra, out, request: gr.Request):
        try:
            msg = session.undo(target, target_image(self.wb, session, target, ref, extra, out), self.predictor(request))
        except WorkbenchError as exc:
            msg = warn(exc)
        return {self.p.session: session, **self.render(session, target, opacity, ref, extra, out, msg)}

    def on_clear_clicks(self, session: MaskSession, target, opacity, ref, extra, out):
        session.prompts.pop(target, None)
        msg = "clicks cleared; " + session.drop_sam_mask(target)
        return {self.p.session: session, **self.render(session, target, opacity, ref, extra, out, msg)}

    def on_candidate(self, session: MaskSession, index, target, opacity, ref, extra, out):
        if index is None or target not in session.prompts or not session.prompts[target].candidates:
            return {self.p.session: session, **self.render(session, target, opacity, ref, extra, out)}
        try:
            img = target_image(self.wb, session, target, ref, extra, out)
            msg = session.choose(target, int(index), img)
        except WorkbenchError as exc:
            msg = warn(exc)
        return {self.p.session: session, **self.render(session, target, opacity, ref, extra, out, msg)}

    def on_by_name(
        self,
        session: MaskSession,
        target,
        name,
        threshold,
        opacity,
        ref,
        extra,
        out,
        request: gr.Request,
        progress=gr.Progress(),
    ):
        try:
            img = target_image(self.wb, session, target, ref, extra, out)
            progress(0.1, desc=f"segmenting '{name}'")
            seg = self.wb.segmentation.segment_by_name(img, name, user=user_of(request), threshold=threshold)
            found = f"'{seg.text}': {seg.n_instances} instance(s), {seg.fraction:.0%} of the image"
            if seg.doubtful:
                reason = (seg.reason or "").replace(
                    "lower the threshold", "lower the Score threshold and segment again"
                )
                if "Score threshold" not in reason:
                    reason += "; or lower the Score threshold and segment again"
                msg = session.offer(target, seg.mask, "text-prompted", img, doubtful=reason)
                warn(f"doubtful mask of '{seg.text}': nothing was applied")
            else:
                msg = f"{found}. {session.offer(target, seg.mask, 'text-prompted', img)}"
        except WorkbenchError as exc:
            msg = warn(exc)
        return {self.p.session: session, **self.render(session, target, opacity, ref, extra, out, msg)}

    def on_apply(self, session: MaskSession, target, opacity, ref, extra, out):
        try:
            msg = session.apply_pending(target, target_image(self.wb, session, target, ref, extra, out))
        except WorkbenchError as exc:
            msg = warn(exc)
        return {self.p.session: session, **self.render(session, target, opacity, ref, extra, out, msg)}

    def on_discard(self, session: MaskSession, target, opacity, ref, extra, out):
        return {
            self.p.session: session,
            **self.render(session, target, opacity, ref, extra, out, session.discard_pending(target)),
        }

    def on_undo_mask(self, session: MaskSession, target, opacity, ref, extra, out):
        return {
            self.p.session: session,
            **self.render(session, target, opacity, ref, extra, out, session.undo_mask(target)),
        }

    def on_clear_mask(self, session: MaskSession, target, opacity, ref, extra, out):
        had = target in session.masks
        session.clear(target)
        msg = "mask cleared ('Undo mask change' brings it back)" if had else "this image has no mask to clear"
        return {self.p.session: session, **self.render(session, target, opacity, ref, extra, out, msg)}


def wire(
    wb: Workbench,
    p: MaskPanel,
    ref_image: gr.Image,
    extra_refs: gr.File,
    out_image: gr.Image,
    subject: gr.Textbox,
    after_change: Callable[[Any], None] | None = None,
) -> None:
    """Connect the panel's events; `after_change(event)` chains what runs after every mask change."""
    images = [ref_image, extra_refs, out_image]
    shown = [p.view, p.sam_image, p.candidate, p.message, p.proposal_box, p.proposal_view]

    events = MaskEvents(wb, p)

    def chain(event):
        p.changed.append(event)
        if after_change is not None:
            after_change(event)

    common = [p.target, p.opacity, *images]
    refresh_outputs = [p.session, p.target, p.editor, *shown]
    # Not chained to `after_change`: a user's new image clears the results itself (`score_actions.on_new_images`),
    # and a handler that puts images on screen (an example, a stored sample) sets the results that belong to them.
    # One at a time: the image events of one change (an example or a stored sample puts two images on screen)
    # render the same overlay, and two writes of one picture into Gradio's cache at once left a broken image.
    for event in (ref_image.change, out_image.change, extra_refs.change):
        event(
            events.on_images,
            [p.session, *common],
            refresh_outputs,
            concurrency_id="mask-images",
            concurrency_limit=1,
            trigger_mode="always_last",
        )
    # A choice made while the previous one is still being answered is answered next, never dropped (Gradio's
    # default for these events): a dropped choice left the panel showing one image under another's name.
    last = {"trigger_mode": "always_last"}
    p.target.input(events.on_target, [p.session, *common], [p.editor, *shown], **last)
    p.opacity.release(events.render, [p.session, *common], shown, **last)
    p.mode.change(events.on_mode, [p.mode], [p.brush_box, p.sam_box, p.name_box])
    chain(p.use_brush.click(events.on_brush, [p.session, p.editor, *common], [p.session, *shown]))
    chain(
        p.sam_image.select(
            events.on_click,
            [p.session, p.target, p.click_mode, p.opacity, *images],
            [p.session, *shown],
            concurrency_limit=4,
            **last,
        )
    )
    chain(p.undo.click(events.on_undo, [p.session, *common], [p.session, *shown]))
    chain(p.clear_clicks.click(events.on_clear_clicks, [p.session, *common], [p.session, *shown]))
    chain(p.candidate.input(events.on_candidate, [p.session, p.candidate, *common], [p.session, *shown], **last))
    chain(
        p.by_name.click(
            events.on_by_name, [p.session, p.target, subject, p.threshold, p.opacity, *images], [p.session, *shown]
        )
    )
    chain(p.apply.click(events.on_apply, [p.session, *common], [p.session, *shown]))
    p.discard.click(events.on_discard, [p.session, *common], [p.session, *shown])
    chain(p.undo_mask.click(events.on_undo_mask, [p.session, *common], [p.session, *shown]))
    chain(p.clear_mask.click(events.on_clear_mask, [p.session, *common], [p.session, *shown]))
    p.refresh = events.on_images


def refresh_io(p: MaskPanel, ref_image, extra_refs, out_image) -> tuple[list[Any], list[Any]]:
    """(inputs, outputs) of `p.refresh`, for handlers elsewhere that replace the images or masks."""
    return (
        [p.session, p.target, p.opacity, ref_image, extra_refs, out_image],
        [p.session, p.target, p.editor, p.view, p.sam_image, p.candidate, p.message, p.proposal_box, p.proposal_view],
    )
