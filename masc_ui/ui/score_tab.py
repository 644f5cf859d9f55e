"""Score tab: upload or pick a pair, mask it, run the metrics, explain them, save the sample. Each button's
message sits next to it (`score_actions`); the inputs on screen are one sample."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import gradio as gr

from ..workbench import Workbench
from ..workbench.examples import list_examples
from . import catalogue_panel, mask_panel, preset_buttons, sensitivity_panel, staleness, video_events, video_panel
from . import score_actions as act
from .upload import ImageUpload

FRESHNESS = "score-freshness"
"""Concurrency id of the Score tab's "out of date" checks (one at a time, in order)."""


@dataclass
class ScoreTab:
    example: gr.Dropdown
    load: gr.Button
    load_msg: gr.Markdown
    ref_image: gr.Image
    extra_refs: gr.File
    out_image: gr.Image
    out_video: video_panel.VideoUpload
    """The output may be a video instead (one output at a time); it lives in `masks.session.video`."""
    ref_notes: gr.Markdown
    """Notes on the references (transparency flattened, an upload refused and why), under the reference image."""
    upload_notes: gr.Markdown
    """Notes on the output image, under it."""
    video_notes: gr.Markdown
    """Why a video upload was refused, under the video box (emptied for the next upload)."""
    prompt: gr.Textbox
    subject: gr.Textbox
    link: gr.Markdown
    masks: mask_panel.MaskPanel
    video: video_panel.VideoPanel
    metrics: gr.CheckboxGroup
    x100: gr.Checkbox
    run: gr.Button
    run_msg: gr.Markdown
    stale: gr.HTML
    scores: gr.HTML
    report: gr.State
    computed: gr.State
    """The fingerprint of the inputs of each result shown (`staleness.Computed`: score table, maps, catalogue
    explanation); None where nothing is shown."""
    explain: gr.Button
    explain_msg: gr.Markdown
    cp_map: gr.Image
    best_map: gr.Image
    lines: gr.Image
    pf_map: gr.Image
    explain_notes: gr.Markdown
    catalogue: catalogue_panel.CataloguePanel
    sensitivity: sensitivity_panel.SensitivityPanel
    dataset: gr.Textbox
    method: gr.Textbox
    save: gr.Button
    save_new: gr.Button
    save_msg: gr.Markdown
    status: gr.Markdown
    inputs: list = field(default_factory=list)
    """The components that make the sample on screen (images, prompt, subject, mask session)."""

    @property
    def results(self) -> staleness.ResultOutputs:
        """The status line, the fingerprints and the "out of date" note, which every result's handler answers in."""
        return staleness.ResultOutputs(self.status, self.computed, self.stale)


def build(wb: Workbench, status: gr.Markdown) -> ScoreTab:
    with gr.Row(equal_height=True):
        example = gr.Dropdown(
            choices=list_examples(), value=None, label="Example pair", elem_id="example-pick", scale=3, min_width=220
        )
        load = gr.Button("Load example", elem_id="example-load", scale=1, min_width=140)
    load_msg = gr.Markdown(elem_id="load-message", elem_classes=["action-message"])
    with gr.Row():
        with gr.Column(min_width=240):
            ref_image = ImageUpload(
                type="filepath",
                sources=["upload", "clipboard"],
                elem_id="ref-image",
                height=300,
                label="Reference image",
            )
            ref_notes = gr.Markdown(elem_id="ref-notes", elem_classes=["action-message"])
            extra_refs = gr.File(
                label="More reference images (optional)",
                file_count="multiple",
                file_types=["image"],
                elem_id="extra-refs",
                height=140,
            )
        with gr.Column(min_width=240):
            out_image = ImageUpload(
                type="filepath", sources=["upload", "clipboard"], elem_id="out-image", height=300, label="Output image"
            )
            upload_notes = gr.Markdown(elem_id="upload-notes", elem_classes=["action-message"])
            out_video = video_panel.build_upload()
            video_notes = gr.Markdown(elem_id="video-upload-notes", elem_classes=["action-message"])
    with gr.Row():
        prompt = gr.Textbox(
            label="Prompt", placeholder="a photo of a cat lying on the grass", elem_id="prompt", scale=3, min_width=240
        )
        subject = gr.Textbox(label="Subject name", placeholder="cat", elem_id="subject", scale=1, min_width=160)
    link = gr.Markdown(act.NEW_SAMPLE, elem_id="sample-link", elem_classes=["sample-link"])
    with gr.Accordion("Masks (brush, Segment Anything clicks, or the subject's name)", open=True):
        masks = mask_panel.build(wb)
    video = video_panel.build()
    specs = wb.scoring.metric_specs()
    with gr.Row():
        metrics = gr.CheckboxGroup(
            catalogue_panel.metric_choices(wb, specs),
            value=[s.name for s in specs],
            label="Metrics",
            elem_id="metric-pick",
            scale=4,
        )
        x100 = gr.Checkbox(False, label="x100 display (DreamBench++)", elem_id="x100", scale=1, min_width=160)
    preset_buttons.build(wb, metrics, masks.session)
    with gr.Row(equal_height=True):
        run = gr.Button("Run", variant="primary", elem_id="run", scale=1, min_width=140)
        run_msg = gr.Markdown(elem_id="run-message", elem_classes=["action-message"], min_width=240)
    stale = gr.HTML(elem_id="stale-box")
    scores = gr.HTML(elem_id="scores")
    video_panel.build_plot(video)
    report = gr.State(None)
    computed = gr.State(staleness.NOTHING)
    with gr.Row(equal_height=True):
        explain = gr.Button("Explain (MaSC patch maps)", elem_id="explain", scale=1, min_width=200)
        explain_msg = gr.Markdown(elem_id="explain-message", elem_classes=["action-message"], min_width=240)
    with gr.Row():
        cp_map = gr.Image(
            label="CP over each reference",
            interactive=False,
            elem_id="cp-map",
            buttons=["download"],
            height=420,
            min_width=240,
        )
        best_map = gr.Image(
            label="Best match over the output",
            interactive=False,
            elem_id="best-map",
            buttons=["download"],
            height=420,
            min_width=240,
        )
    with gr.Row():
        lines = gr.Image(
            label="Top correspondences",
            interactive=False,
            elem_id="corr-lines",
            buttons=["download"],
            height=420,
            min_width=240,
        )
        pf_map = gr.Image(
            label="PF pooling attention",
            interactive=False,
            elem_id="pf-map",
            buttons=["download"],
            height=420,
            min_width=240,
        )
    explain_notes = gr.Markdown(elem_id="explain-notes")
    inputs = [ref_image, extra_refs, out_image, prompt, subject, masks.session]
    sample_of = act.screen_sample(wb)
    catalogue = catalogue_panel.build(wb, sample_of, inputs, metrics, status, computed, stale)
    sensitivity = sensitivity_panel.build(wb, sample_of, inputs, metrics, status, computed, stale)
    with gr.Row(equal_height=True):
        dataset = gr.Textbox("workbench", label="Dataset", elem_id="save-dataset", min_width=160)
        method = gr.Textbox(label="Method (optional)", elem_id="save-method", min_width=160)
        with gr.Column(min_width=200):
            save = gr.Button("Save sample, masks and scores", variant="primary", elem_id="save")
            save_new = gr.Button("Save as a new sample", size="sm", elem_id="save-new")
    save_msg = gr.Markdown(elem_id="score-message", elem_classes=["action-message"])
    tab = ScoreTab(
        example,
        load,
        load_msg,
        ref_image,
        extra_refs,
        out_image,
        out_video,
        ref_notes,
        upload_notes,
        video_notes,
        prompt,
        subject,
        link,
        masks,
        video,
        metrics,
        x100,
        run,
        run_msg,
        stale,
        scores,
        report,
        computed,
        explain,
        explain_msg,
        cp_map,
        best_map,
        lines,
        pf_map,
        explain_notes,
        catalogue,
        sensitivity,
        dataset,
        method,
        save,
        save_new,
        save_msg,
        status,
    )
    tab.inputs = inputs
    _wire(wb, tab)
    return tab


def _wire(wb: Workbench, tab: ScoreTab) -> None:
    check = act.on_freshness(wb)
    stale_io = ([*tab.inputs, tab.computed], [tab.stale, tab.catalogue.stale, tab.sensitivity.stale])

    def fresh(event: Any) -> None:
        """The "out of date" check after `event` (a change of the inputs, or a result computed meanwhile). All checks
        run one at a time, in the order they were asked for, so the last answer is that of the latest state."""
        event.then(check, *stale_io, show_progress="hidden", concurrency_id=FRESHNESS, concurrency_limit=1)

    mask_panel.wire(wb, tab.masks, tab.ref_image, tab.extra_refs, tab.out_image, tab.subject, after_change=fresh)
    for box in (tab.prompt, tab.subject):
        box.change(
            check,
            *stale_io,
            show_progress="hidden",
            trigger_mode="always_last",
            concurrency_id=FRESHNESS,
            concurrency_limit=1,
        )
    results = [
        tab.scores,
        tab.report,
        tab.computed,
        tab.stale,
        tab.cp_map,
        tab.best_map,
        tab.lines,
        tab.pf_map,
        tab.explain_notes,
        tab.run_msg,
        tab.explain_msg,
        tab.save_msg,
        tab.video.plot,
        tab.video.plot_box,
    ]
    new_images = [
        *results,
        tab.method,
        tab.example,
        tab.load_msg,
        tab.link,
        tab.masks.session,
        tab.catalogue.pictures,
        tab.catalogue.notes,
        tab.catalogue.stale,
        tab.sensitivity.table,
        tab.sensitivity.stale,
    ]
    for event in (
        tab.ref_image.upload,
        tab.ref_image.clear,
        tab.out_image.upload,
        tab.out_image.clear,
        tab.extra_refs.upload,
        tab.extra_refs.clear,
    ):
        event(act.on_new_images(tab), [tab.masks.session, tab.dataset], new_images, show_progress="hidden")
    notes = act.upload_notes(wb)
    for event in (tab.ref_image.change, tab.extra_refs.change, tab.out_image.change):
        event(
            notes,
            [tab.masks.session, tab.ref_image, tab.extra_refs, tab.out_image],
            [tab.ref_notes, tab.upload_notes],
            show_progress="hidden",
        )

    tab.load.click(
        act.on_load_example(wb, tab),
        [tab.example, tab.masks.session, tab.dataset],
        [*new_images, tab.ref_image, tab.extra_refs, tab.out_image, tab.prompt, tab.subject, tab.out_video],
        api_name="load_example",
    )
    video_events.wire(wb, tab, new_images, fresh)
    plot = video_events.plot_io(wb, tab)
    ran = tab.run.click(
        act.on_run(wb, tab),
        [*tab.inputs, tab.metrics, tab.x100, tab.computed],
        [tab.scores, tab.report, tab.run_msg, tab.computed, tab.stale, tab.status],
        concurrency_limit=2,
        api_name="run",
    )
    ran.then(*plot, show_progress="hidden")
    fresh(ran)
    tab.x100.change(
        lambda rep, on: gr.update() if rep is None else act.score_table(wb, rep, on),
        [tab.report, tab.x100],
        [tab.scores],
    )
    maps = [tab.cp_map, tab.best_map, tab.lines, tab.pf_map, tab.explain_notes]
    fresh(
        tab.explain.click(
            act.on_explain(wb, tab),
            [*tab.inputs, tab.computed],
            [*maps, tab.explain_msg, tab.computed, tab.stale, tab.status],
            concurrency_limit=2,
            api_name="explain",
        )
    )
    fresh(tab.catalogue.explained)
    fresh(tab.sensitivity.checked)
    saved = [tab.save_msg, tab.masks.session, tab.scores, tab.report, tab.computed, tab.stale, tab.link, tab.status]
    save_in = [*tab.inputs, tab.metrics, tab.dataset, tab.method, tab.x100, tab.computed]
    for button, as_new, api in ((tab.save, False, "save"), (tab.save_new, True, "save_new")):
        stored = button.click(act.on_save(wb, tab, as_new=as_new), save_in, saved, concurrency_limit=2, api_name=api)
        stored.then(*plot, show_progress="hidden")
        fresh(stored)
