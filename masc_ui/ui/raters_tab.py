"""Raters tab (admins): rater quality control for a stored dataset — the rater report (who to trust and why: the same
table as `masc-ui raters`, with CSV and JSON files), and gold tasks (mark a sample with its accepted answer, list
them, make the attention checks of a dataset; the same use cases as `masc-ui gold`), each dataset's rating guide and
practice round (`guide_admin`, as `masc-ui guide`), and crowd studies (`studies_panel`)."""

from __future__ import annotations

import re
from pathlib import Path

import gradio as gr

from ..errors import WorkbenchError
from ..workbench import Workbench
from ..workbench.agreement import MAX_BOOTSTRAP
from ..workbench.rater_report import RaterReport, report_rows
from . import guide_admin, pair_gold_section, studies_panel
from .dataset_picker import dataset_picker, refresh_on_open
from .gold_section import PICK_A_DATASET, GoldSection
from .plain_text import literal
from .users import user_of

GOLD_NOTE = (
    "A gold task is a sample whose accepted answer you know: one score (`3`) or a range (`3-4`). Raters get gold tasks "
    "mixed in at `MASC_GOLD_RATE` (one in every round(1 / rate) tasks), shown exactly like other tasks; their ratings "
    "measure the rater and never count as ratings of a method. Name the sample by its key or `#id` (Browse tab). **Make attention checks** adds, per subject, its reference shown as "
    "the output (accepted CP 4) and an output of another subject (accepted CP 0-1)."
)


REPORT_NOTE = (
    "Per rater: rated answers, skips and flags; median and 10th-percentile seconds per task; answers under the time "
    "floor (`MASC_MIN_SECONDS`); the longest run of identical answers; gold accuracy and attention checks passed "
    "(correct/n); agreement with the other raters (interval alpha of the rater against the others' mean, 95% "
    "bootstrap CI, n samples) and Spearman rho with each metric. A marked rater stays in the database: the "
    "Agreement and Leaderboard tabs can leave the marked raters out. Same numbers as "
    "`masc-ui raters --dataset NAME`."
)


def build(wb: Workbench, page: gr.Tab) -> None:
    with gr.Row(equal_height=True):
        dataset = dataset_picker("raters-dataset")
        criterion_of_report = gr.Radio(
            ["cp", "pf"], value="cp", label="Agreement on", elem_id="raters-criterion", min_width=140
        )
        n_boot = gr.Number(
            1000, precision=0, minimum=0, maximum=MAX_BOOTSTRAP, label="Bootstrap resamples", elem_id="raters-nboot"
        )
    with gr.Row(equal_height=True):
        run = gr.Button("Compute the rater report", variant="primary", scale=0, min_width=240, elem_id="raters-run")
        message = gr.Markdown(elem_id="raters-message", elem_classes=["action-message"])
    caption = gr.Markdown(elem_id="raters-caption")
    table = gr.Dataframe(interactive=False, wrap=False, elem_id="raters-table", label="Rater report")
    marks = gr.Markdown(elem_id="raters-marks", elem_classes=["table-note"])
    files = gr.File(label="Download (CSV, JSON)", file_count="multiple", interactive=False, elem_id="raters-files")
    gr.Markdown(REPORT_NOTE, elem_id="raters-note")
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
        gold_table = gr.Dataframe(interactive=False, wrap=False, elem_id="gold-table", label="Gold tasks")
    pair_gold_section.build(wb, dataset, message)
    guide_admin.build(wb, dataset)
    refresh_on_open(wb, page, dataset, message, "raters_datasets")

    gold = GoldSection(gold_table, message, wb.gold.table)

    def on_mark(ds, sid, crit, accept, why, request: gr.Request):
        def mark_sample(user: str | None, name: str) -> str:
            record = wb.gold.mark(
                user=user, dataset=name, sample=sid or "", criterion=crit, accepted=accept or "", note=why
            )
            return f"sample {sid.strip()} is a gold task: {record.criterion} accepts {accept.strip()}"

        return gold.act(ds, request, mark_sample)

    def on_unmark(ds, sid, crit, request: gr.Request):
        def unmark_sample(user: str | None, name: str) -> str:
            n = wb.gold.unmark(user=user, dataset=name, sample=sid or "", criterion=crit)
            return f"removed {n} gold mark(s)" if n else "that sample was not gold"

        return gold.act(ds, request, unmark_sample)

    def on_attention(ds, request: gr.Request):
        return gold.act(ds, request, lambda user, name: wb.gold.make_attention_checks(user=user, dataset=name).text())

    def on_dataset(ds, request: gr.Request):
        name = (ds or "").strip()
        if not name:
            return {message: ""}
        try:
            return {gold_table: gold.listing(user_of(request), name), message: ""}
        except WorkbenchError as exc:
            return {message: f"⚠ {exc}"}

    def on_run(ds, crit, boots, request: gr.Request, progress=gr.Progress()):
        name = (ds or "").strip()
        if not name:
            return {message: PICK_A_DATASET}
        try:
            progress(0.1, desc="bootstrapping the agreement CIs")
            report = wb.rater_report.report(
                user=user_of(request), dataset=name, criterion=crit, n_boot=int(boots if boots is not None else 1000)
            )
            paths = write_files(report, wb.scratch.new_folder())
        except WorkbenchError as exc:
            return {message: f"⚠ {exc}"}
        headers, rows = report_rows(report)
        return {
            caption: report.text().splitlines()[0],
            table: {"headers": headers, "data": rows},
            marks: marks_text(report),
            files: [str(p) for p in paths],
            message: f"{len(rows)} rater(s), {len(report.marked)} marked",
        }

    run.click(
        on_run, [dataset, criterion_of_report, n_boot], [caption, table, marks, files, message], api_name="raters"
    )
    mark.click(on_mark, [dataset, sample, criterion, accepted, note], [gold_table, message], api_name="gold_mark")
    unmark.click(on_unmark, [dataset, sample, criterion], [gold_table, message], api_name="gold_unmark")
    attention.click(on_attention, [dataset], [gold_table, message], api_name="gold_attention")
    dataset.change(on_dataset, [dataset], [gold_table, message], api_name="gold_list")
    studies_panel.build(wb, page, dataset)


def marks_text(report: RaterReport) -> str:
    """The marked raters and why, one line each (Markdown), or that nobody is marked."""
    marked = [q for q in report.rows if q.marked]
    if not marked:
        return "No rater is marked: everyone is above every threshold."
    return "\n".join(f"- **{literal(q.rater)}** is marked: {literal('; '.join(q.marks))}" for q in marked)


def write_files(report: RaterReport, folder: Path) -> list[Path]:
    """`raters-<dataset>-<criterion>.csv` (the table) and `.json` (`RaterReport.to_dict`)."""
    stem = "raters-" + re.sub(r"[^A-Za-z0-9._-]+", "-", report.dataset).strip("-.")[:60] + f"-{report.criterion}"
    csv_path, json_path = folder / f"{stem}.csv", folder / f"{stem}.json"
    csv_path.write_text(report.to_csv(), encoding="utf-8")
    json_path.write_text(report.to_json(), encoding="utf-8")
    return [csv_path, json_path]
