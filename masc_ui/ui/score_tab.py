"""Score tab: upload or pick a pair, mask it, run the metrics, explain them, save the sample."""
from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from ..errors import WorkbenchError
from ..workbench import Workbench
from ..workbench.examples import list_examples, load_example
from ..workbench.masks import MaskSession
from . import catalogue_panel, mask_panel, video_panel
from .gpu import gpu
from .score_table import score_table_html
from .users import user_of


@dataclass
class ScoreTab:
    ref_image: gr.Image
    extra_refs: gr.File
    out_image: gr.Image
    prompt: gr.Textbox
    subject: gr.Textbox
    masks: mask_panel.MaskPanel
    sample_id: gr.State
    message: gr.Markdown
    scores: gr.HTML
    explain: tuple
    """(handler, inputs, outputs) of the Explain button, for flows that open a sample."""
    out_video: video_panel.VideoUpload
    video: video_panel.VideoPanel


def build(wb: Workbench, status: gr.Markdown) -> ScoreTab:
    from .upload import ImageUpload

    with gr.Row():
        examples = gr.Dropdown(choices=list_examples(), value=None, label="Example pair", elem_id="example-pick",
                               scale=3)
        load = gr.Button("Load example", elem_id="example-load", scale=1)
    with gr.Row():
        with gr.Column():
            ref_image = ImageUpload(type="filepath", sources=["upload", "clipboard"], label="Reference image (drag and drop, paste or click)", elem_id="ref-image",
                                    height=300)
            extra_refs = gr.File(label="More reference images (optional)", file_count="multiple",
                                 file_types=["image"], elem_id="extra-refs", height=140)
        with gr.Column():
            out_image = ImageUpload(type="filepath", sources=["upload", "clipboard"], label="Output image (drag and drop, paste or click)", elem_id="out-image",
                                    height=300)
            out_video = video_panel.build_upload()
    with gr.Row():
        prompt = gr.Textbox(label="Prompt", placeholder="a photo of a cat lying on the grass", elem_id="prompt",
                            scale=3)
        subject = gr.Textbox(label="Subject name", placeholder="cat", elem_id="subject", scale=1)
    with gr.Accordion("Masks (brush, Segment Anything clicks, or the subject's name)", open=True):
        masks = mask_panel.build()
    specs = wb.metric_specs()
    with gr.Row():
        metrics = gr.CheckboxGroup(catalogue_panel.metric_choices(wb, specs), value=[s.name for s in specs],
                                   label="Metrics", elem_id="metric-pick", scale=4)
        x100 = gr.Checkbox(False, label="x100 display (DreamBench++)", elem_id="x100", scale=1)
    catalogue_panel.presets(metrics)
    run = gr.Button("Run", variant="primary", elem_id="run")
    scores = gr.HTML(elem_id="scores")
    report_state = gr.State(None)
    video = video_panel.build()
    explain = gr.Button("Explain (MaSC patch maps)", elem_id="explain")
    with gr.Row():
        cp_map = gr.Gallery(label="CP over each reference", columns=2, object_fit="contain", interactive=False,
                            elem_id="cp-map", buttons=["download"])
        best_map = gr.Image(label="Best match over the output", interactive=False, elem_id="best-map",
                            buttons=["download"])
    with gr.Row():
        lines = gr.Image(label="Top correspondences", interactive=False, elem_id="corr-lines", buttons=["download"])
        pf_map = gr.Image(label="PF pooling attention", interactive=False, elem_id="pf-map", buttons=["download"])
    explain_notes = gr.Markdown(elem_id="explain-notes")
    catalogue_panel.build(wb, lambda *fields: sample_of(*fields),
                          [ref_image, extra_refs, out_image, prompt, subject, masks.session], metrics, status)
    with gr.Row():
        dataset = gr.Textbox("workbench", label="Dataset", elem_id="save-dataset")
        method = gr.Textbox(label="Method (optional)", elem_id="save-method")
        save = gr.Button("Save sample, masks and scores", elem_id="save")
    message = gr.Markdown(elem_id="score-message")
    sample_id = gr.State(None)

    mask_panel.wire(wb, masks, ref_image, extra_refs, out_image, subject)
    refresh_in, refresh_out = mask_panel.refresh_io(masks, ref_image, extra_refs, out_image)

    def on_load(name: str | None, session: MaskSession):
        if not name:
            return gr.update(), gr.update(), gr.update(), gr.update(), session, "⚠ choose an example pair first"
        try:
            ex = load_example(name)
        except WorkbenchError as exc:
            return gr.update(), gr.update(), gr.update(), gr.update(), session, f"⚠ {exc}"
        session.reset()
        session.set_mask("ref0", ex.ref_mask, "imported")
        session.set_mask("out", ex.out_mask, "imported")
        return str(ex.ref), str(ex.out), ex.prompt, ex.subject, session, f"loaded example '{ex.title}' with its masks"

    load.click(on_load, [examples, masks.session], [ref_image, out_image, prompt, subject, masks.session, message],
               api_name="load_example")\
        .then(lambda: None, None, [extra_refs]).then(masks.refresh, refresh_in, refresh_out)

    def sample_of(ref, extra, out, prompt_text, subject_text, session: MaskSession, vstate=None):
        """The sample on screen, from the images the session decoded at upload (not decoded again)."""
        refs, out_path = mask_panel.image_paths(ref, extra, out)
        ref_masks, out_mask = mask_panel.masks_for_sample(session, len(refs))
        ref_imgs = [mask_panel.session_image(wb, session, r, f"reference image {i + 1}") for i, r in enumerate(refs)]
        if video_panel.has_video(vstate):
            return video_panel.video_sample(wb, vstate, ref_imgs, prompt_text, subject_text, ref_masks)
        out_img = None if out_path is None else mask_panel.session_image(wb, session, out_path, "output image")
        return wb.make_sample(ref_imgs, out_img, prompt_text, subject_text, ref_masks, out_mask)

    inputs = [ref_image, extra_refs, out_image, prompt, subject, masks.session, video.state]
    video_panel.wire(wb, video, out_video, out_image, subject, report_state, sample_of, inputs[:-1], metrics)

    @gpu
    def on_run(ref, extra, out, prompt_text, subject_text, session, vstate, names, as_x100, request: gr.Request,
               progress=gr.Progress()):
        try:
            sample = sample_of(ref, extra, out, prompt_text, subject_text, session, vstate)
            if not names:
                return gr.update(), None, "⚠ choose at least one metric", wb.status().line()
            report = wb.score(sample, names, user=user_of(request), progress=lambda f, d: progress(f, desc=d))
        except WorkbenchError as exc:
            return "", None, f"⚠ {exc}", wb.status().line()
        html = score_table_html(report, x100=as_x100, demo=wb.status().is_demo, notes=video_panel.row_notes(report))
        how = "reused cached scores" if report.cached else f"computed in {report.seconds:.2f} s"
        note = f"scored {len(report.rows)} metric(s) ({how}): " + ", ".join(r.display_name for r in report.rows)
        return html, report, note, wb.status().line()

    run.click(on_run, [*inputs, metrics, x100], [scores, report_state, message, status], concurrency_limit=2,
              api_name="run").then(*video.after_run, show_progress="hidden")
    x100.change(lambda rep, on: gr.update() if rep is None else score_table_html(
                    rep, x100=on, demo=wb.status().is_demo, notes=video_panel.row_notes(rep)),
                [report_state, x100], [scores])

    @gpu
    def on_explain(ref, extra, out, prompt_text, subject_text, session, vstate, request: gr.Request,
                   progress=gr.Progress()):
        if video_panel.has_video(vstate):
            return None, None, None, None, "the output is a video: click a frame of the strip to explain it", \
                wb.status().line()
        try:
            sample = sample_of(ref, extra, out, prompt_text, subject_text, session)
            ex = wb.explain(sample, user=user_of(request), progress=lambda f, d: progress(f, desc=d))
        except WorkbenchError as exc:
            return None, None, None, None, f"⚠ {exc}", wb.status().line()
        notes = "; ".join(ex.notes) if ex.notes else f"CP {ex.cp:.4f} · PF {ex.pf:.4f}"
        cp_maps = [(img, f"reference {i + 1}") for i, img in enumerate(ex.cp_ref) if img is not None]
        return cp_maps, ex.out_best, ex.lines, ex.pf_attention, notes, wb.status().line()

    explain.click(on_explain, inputs, [cp_map, best_map, lines, pf_map, explain_notes, status], concurrency_limit=2,
                  api_name="explain")

    @gpu
    def on_save(ref, extra, out, prompt_text, subject_text, session: MaskSession, vstate, names, dataset_name,
                method_name, request: gr.Request, progress=gr.Progress()):
        try:
            sample = sample_of(ref, extra, out, prompt_text, subject_text, session, vstate)
            saved = wb.save_sample(sample, user=user_of(request), dataset=dataset_name, method=method_name or None,
                                   mask_sources={**session.sources, **video_panel.mask_sources(vstate)},
                                   names=names or None,
                                   progress=lambda f, d: progress(f, desc=d))
        except WorkbenchError as exc:
            return None, f"⚠ {exc}"
        return saved.sample_id, saved.message

    save.click(on_save, [*inputs, metrics, dataset, method], [sample_id, message], concurrency_limit=2,
               api_name="save")
    explain_io = (on_explain, inputs, [cp_map, best_map, lines, pf_map, explain_notes, status])
    return ScoreTab(ref_image, extra_refs, out_image, prompt, subject, masks, sample_id, message, scores, explain_io,
                    out_video, video)
