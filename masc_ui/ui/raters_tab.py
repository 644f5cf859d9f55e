"""Raters tab (admins): rater quality control for a stored dataset — gold tasks (mark a sample with its accepted
answer, list them, make the attention checks of a dataset). The same use cases as `masc-ui gold`."""

from __future__ import annotations

import gradio as gr

from ..errors import WorkbenchError
from ..workbench import Workbench
from .dataset_picker import dataset_picker, refresh_on_open
from .users import user_of

GOLD_NOTE = (
    "A gold task is a sample whose accepted answer you know: one score (`3`) or a range (`3-4`). Raters get gold tasks "
    "mixed in at `MASC_GOLD_RATE` (one in every round(1 / rate) tasks), shown exactly like other tasks; their ratings "
    "measure the rater and never count as ratings of a method. Name the sample by its key or `#id` (Browse tab). **Make attention checks** adds, per subject, its reference shown as "
    "the output (accepted CP 4) and an output of another subject (accepted CP 0-1)."
)


def build(wb: Workbench, page: gr.Tab) -> None:
    with gr.Row(equal_height=True):
        dataset = dataset_picker("raters-dataset")
        message = gr.Markdown(elem_id="raters-message", elem_classes=["action-message"])
    with gr.Accordion("Gold tasks", open=True, elem_id="gold-box"):
        gr.Markdown(GOLD_NOTE, elem_id="gold-note")
        with gr.Row(equal_height=True):
            sample = gr.Textbox(label="Sample (key or #id)", elem_id="gold-sample", max_lines=1, min_width=160)
            criterion = gr.Radio(["cp", "pf"], value="cp", label="Criterion", elem_id="gold-criterion", min_width=140)
            accepted = gr.Textbox(label="Accepted answer", placeholder="3 or 3-4", elem_id="gold-accepted", max_lines=1)
            note = gr.Textbox(label="Why (admins only)", elem_id="gold-why", max_lines=1, min_width=200)
        with gr.Row():
            mark = gr.Button("Mark as gold", variant="primary", elem_id="gold-mark", scale=0, min_width=160)
            unmark = gr.Button("Remove the mark", elem_id="gold-unmark", scale=0, min_width=160)
            attention = gr.Button("Make attention checks", elem_id="gold-attention", scale=0, min_width=200)
        gold_table = gr.Dataframe(interactive=False, wrap=True, elem_id="gold-table", label="Gold tasks")
    refresh_on_open(wb, page, dataset, message, "raters_datasets")

    def gold_listing(user: str | None, name: str) -> dict:
        headers, rows = wb.gold.table(user=user, dataset=name)
        return {"headers": headers, "data": rows}

    def on_mark(ds, sid, crit, accept, why, request: gr.Request):
        name = (ds or "").strip()
        if not name:
            return gr.update(), "⚠ pick a dataset first"
        user = user_of(request)
        try:
            record = wb.gold.mark(
                user=user, dataset=name, sample=sid or "", criterion=crit, accepted=accept or "", note=why
            )
            return gold_listing(
                user, name
            ), f"sample {sid.strip()} is a gold task: {record.criterion} accepts {accept.strip()}"
        except WorkbenchError as exc:
            return gr.update(), f"⚠ {exc}"

    def on_unmark(ds, sid, crit, request: gr.Request):
        name = (ds or "").strip()
        if not name:
            return gr.update(), "⚠ pick a dataset first"
        user = user_of(request)
        try:
            n = wb.gold.unmark(user=user, dataset=name, sample=sid or "", criterion=crit)
            return gold_listing(user, name), f"removed {n} gold mark(s)" if n else "that sample was not gold"
        except WorkbenchError as exc:
            return gr.update(), f"⚠ {exc}"

    def on_attention(ds, request: gr.Request):
        name = (ds or "").strip()
        if not name:
            return gr.update(), "⚠ pick a dataset first"
        user = user_of(request)
        try:
            made = wb.gold.make_attention_checks(user=user, dataset=name)
            return gold_listing(user, name), made.text()
        except WorkbenchError as exc:
            return gr.update(), f"⚠ {exc}"

    def on_dataset(ds, request: gr.Request):
        name = (ds or "").strip()
        if not name:
            return gr.update(), ""
        try:
            return gold_listing(user_of(request), name), ""
        except WorkbenchError as exc:
            return gr.update(), f"⚠ {exc}"

    mark.click(on_mark, [dataset, sample, criterion, accepted, note], [gold_table, message], api_name="gold_mark")
    unmark.click(on_unmark, [dataset, sample, criterion], [gold_table, message], api_name="gold_unmark")
    attention.click(on_attention, [dataset], [gold_table, message], api_name="gold_attention")
    dataset.change(on_dataset, [dataset], [gold_table, message], api_name="gold_list")
