"""Browse and export tab: stored samples with latest metric values and mean human ratings; open one in the
Score tab; download the export."""
from __future__ import annotations

from dataclasses import dataclass

import gradio as gr

from ..errors import WorkbenchError
from ..workbench import Workbench
from ..workbench.browse import EXPORT_FORMATS
from ..workbench.masks import MaskSession
from .score_table import score_table_html
from .users import user_of
from .video_media import open_video, poster_preview

SUFFIXES = {"image/png": ".png", "image/jpeg": ".jpg", "image/webp": ".webp"}
"""File name suffix of an opened sample's image handed to the browser, by its stored media type."""


@dataclass
class BrowseTab:
    sample_id: gr.Number
    open: gr.Button
    refresh: gr.Button
    message: gr.Markdown
    on_refresh: object
    """Handler filling the table from the filter inputs (`inputs` -> `outputs`)."""
    inputs: list
    outputs: list


def build(wb: Workbench) -> BrowseTab:
    with gr.Row():
        dataset = gr.Dropdown([], value=None, label="Dataset", allow_custom_value=True, elem_id="browse-dataset")
        method = gr.Dropdown([], value=None, label="Method", allow_custom_value=True, elem_id="browse-method")
        subject = gr.Dropdown([], value=None, label="Subject", allow_custom_value=True, elem_id="browse-subject")
        sort = gr.Dropdown(["id"], value="id", label="Sort by", elem_id="browse-sort")
        descending = gr.Checkbox(False, label="Descending", elem_id="browse-desc")
    refresh = gr.Button("Refresh", elem_id="browse-refresh")
    table = gr.Dataframe(interactive=False, wrap=True, elem_id="browse-table", max_height=480)
    with gr.Row():
        sample_id = gr.Number(label="Sample id (or click a row)", precision=0, elem_id="browse-sample-id")
        open_btn = gr.Button("Open in the Score tab", elem_id="browse-open")
        poster = gr.Image(label="Output (a video: its poster frame)", interactive=False, height=160,
                          elem_id="browse-poster", buttons=[])
    with gr.Row():
        fmt = gr.Radio(list(EXPORT_FORMATS), value="csv", label="Export format", elem_id="export-format",
                       info="imagefolder: images, masks and metadata for Hugging Face datasets (a zip)")
        export = gr.Button("Export", elem_id="export")
        download = gr.File(label="Download", interactive=False, elem_id="export-file")
    message = gr.Markdown(elem_id="browse-message")

    def on_refresh(ds, me, su, sort_by, desc, request: gr.Request):
        try:
            user = user_of(request)
            choices = wb.samples.filters(user=user)
            headers, rows = wb.samples.browse(user=user, dataset=ds or None, method=me or None, subject=su or None)
        except WorkbenchError as exc:
            return [gr.update()] * 5 + [f"⚠ {exc}"]
        key = headers.index(sort_by) if sort_by in headers else 0
        rows.sort(key=lambda r: (r[key] is None, r[key]), reverse=bool(desc))
        return (gr.update(choices=[""] + choices["dataset"]), gr.update(choices=[""] + choices["method"]),
                gr.update(choices=[""] + choices["subject"]), gr.update(choices=headers, value=sort_by),
                {"headers": headers, "data": rows}, f"{len(rows)} sample(s)")

    outs = [dataset, method, subject, sort, table, message]
    ins = [dataset, method, subject, sort, descending]
    refresh.click(on_refresh, ins, outs, api_name="browse")
    for comp in (dataset, method, subject, sort, descending):
        comp.input(on_refresh, ins, outs)

    def on_select(evt: gr.SelectData):
        row = evt.row_value or []
        return row[0] if row else gr.update()

    table.select(on_select, None, [sample_id])

    def on_poster(sid, request: gr.Request):
        try:
            picture, caption = poster_preview(wb, sid, user=user_of(request))
        except WorkbenchError as exc:
            return None, f"⚠ {exc}"
        return (gr.Image(value=picture, label=caption) if picture is not None else None), caption

    sample_id.change(on_poster, [sample_id], [poster, message], api_name="browse_poster", show_progress="hidden")

    def on_export(kind, ds, request: gr.Request):
        try:
            path, _ = wb.samples.export(kind, user=user_of(request), dataset=ds or None, folder=wb.scratch.new_folder())
        except WorkbenchError as exc:
            return None, f"⚠ {exc}"
        return str(path), f"exported {path.name}"

    export.click(on_export, [fmt, dataset], [download, message], api_name="export")
    return BrowseTab(sample_id, open_btn, refresh, message, on_refresh, ins, outs)


def open_handler(wb: Workbench):
    """(sample id, session) -> the Score tab's reference, extra references, output, prompt, subject, session,
    its message, its score table (the stored values) and the selected tab, for a stored sample with its
    current masks. The images go to the browser as their stored bytes (so a Save of the opened sample finds the
    same images and the same sample)."""
    def handler(sample_id, session: MaskSession, vstate, request: gr.Request):
        if sample_id is None:
            return (*[gr.update()] * 6, "⚠ type a sample id or click a row first", gr.update(), gr.update(),
                    gr.update(), vstate)
        try:
            user = user_of(request)
            s = wb.samples.open(int(sample_id), user=user)
            table = score_table_html(wb.stored_report(s.sample_id, user=user), demo=wb.status().is_demo)
            video = open_video(wb, s, vstate) if getattr(s.out, "frame_count", None) is not None else None
        except WorkbenchError as exc:
            return (*[gr.update()] * 6, f"⚠ {exc}", gr.update(), gr.update(), gr.update(), vstate)
        if video is None:
            vstate.reset()
        session.reset()
        for i, m in enumerate(s.ref_masks):
            if m is not None:
                session.set_mask(f"ref{i}", m, s.mask_sources.get(f"ref{i}", "imported"))
        if s.out_mask is not None:
            session.set_mask("out", s.out_mask, s.mask_sources.get("out", "imported"))
        folder = wb.scratch.new_folder()
        files = []
        for name, img in [(f"reference-{i}", r) for i, r in enumerate(s.refs, 1)] + [("output", s.out)] * (not video):
            path = folder / f"{name}{SUFFIXES.get(img.media_type, '.png')}"
            path.write_bytes(img.data)
            files.append(str(path))
        extra = files[1:-1] if not video else files[1:]
        return (files[0], extra or None, None if video else files[-1], s.prompt, s.subject, session,
                f"opened sample #{s.sample_id} with its current masks and stored scores", table,
                gr.Tabs(selected="score"), video, vstate)
    return handler
