"""Leaderboard tab (admins): `masc-ui leaderboard` for a stored dataset — per method (or category) every metric's
mean with its bootstrap 95% CI and rank, the human columns (0-4 ratings per criterion; Bradley-Terry theta from the
pairwise judgments when there are any), each metric's rank agreement (Kendall tau-b) with every human column, a
methods x metrics figure, and the tables as Markdown, CSV and LaTeX files. Same use case, same numbers as the CLI."""

from __future__ import annotations

import re
from pathlib import Path

import gradio as gr

from ..errors import WorkbenchError
from ..workbench import Workbench
from ..workbench.agreement import MAX_BOOTSTRAP
from ..workbench.leaderboard import LeaderboardView, agreement_notes, agreement_rows, mask_notes, table_rows
from ..workbench.rater_selection import RaterSelection
from .dataset_picker import dataset_picker, refresh_on_open
from .leaderboard_plot import leaderboard_figure
from .users import user_of

NOTE = (
    "Human columns: `human cp`, `human pf`, ... are mean 0-4 ratings (raters averaged per sample); "
    "`human bt_cp` / `human bt_pf` are each method's Bradley-Terry log-strength θ from the pairwise judgments "
    "(CI: bootstrap over output pairs; its rank agreement has no CI). Same numbers as "
    "`masc-ui leaderboard --dataset NAME --by ... --n-boot N --seed 0`."
)


def build(wb: Workbench, page: gr.Tab) -> None:
    with gr.Row(equal_height=True):
        dataset = dataset_picker("lb-dataset")
        by = gr.Radio(["method", "category"], value="method", label="One row per", elem_id="lb-by")
        n_boot = gr.Number(
            2000, precision=0, minimum=0, maximum=MAX_BOOTSTRAP, label="Bootstrap resamples", elem_id="lb-nboot"
        )
        raters = gr.Textbox(
            value="all",
            label="Raters counted",
            info="all · unmarked (all but those the rater report marks) · names: ann,ben",
            max_lines=1,
            elem_id="lb-raters",
            min_width=200,
        )
    with gr.Row(equal_height=True):
        run = gr.Button("Compute leaderboard", variant="primary", scale=0, min_width=220, elem_id="lb-run")
        message = gr.Markdown(elem_id="lb-message")
    caption = gr.Markdown(elem_id="lb-caption")
    table = gr.Dataframe(interactive=False, wrap=False, elem_id="lb-table", label="Leaderboard")
    agreement = gr.Dataframe(
        interactive=False,
        wrap=False,
        elem_id="lb-agreement",
        label="Rank agreement with the humans (Kendall tau-b over groups, 95% CI)",
    )
    agreement_note = gr.Markdown(elem_id="lb-agreement-note", elem_classes=["table-note"])
    mask_note = gr.Markdown(elem_id="lb-mask-note", elem_classes=["table-note"])
    plot = gr.Plot(label="Methods x metrics", show_label=False, elem_id="lb-plot")
    files = gr.File(
        label="Download (Markdown, CSV + rank agreement CSV, LaTeX)",
        file_count="multiple",
        interactive=False,
        elem_id="lb-files",
    )
    gr.Markdown(NOTE, elem_id="lb-note")
    refresh_on_open(wb, page, dataset, message, "leaderboard_datasets")

    def on_run(ds, group_by, boots, who="all", request: gr.Request = None, progress=gr.Progress()):
        name = (ds or "").strip()
        if not name:
            return {message: "⚠ pick a dataset first"}
        try:
            progress(0.1, desc="bootstrapping confidence intervals")
            view = wb.leaderboard.view(
                user=user_of(request),
                dataset=name,
                by=group_by,
                n_boot=int(boots if boots is not None else 2000),
                raters=RaterSelection.parse(who),
            )
            headers, rows = table_rows(view)
            a_headers, a_rows = agreement_rows(view)
            fig = leaderboard_figure(view, demo=wb.status().is_demo)
            paths = write_files(view, wb.scratch.new_folder())
        except WorkbenchError as exc:
            return {message: f"⚠ {exc}"}
        return {
            caption: view.render("md").splitlines()[0],
            table: {"headers": headers, "data": rows},
            agreement: {"headers": a_headers, "data": a_rows} if a_rows else {"headers": ["metric"], "data": []},
            agreement_note: "\n\n".join(agreement_notes(view)),
            mask_note: _mask_note(view),
            plot: fig,
            files: [str(p) for p in paths],
            message: f"{len(rows)} {group_by}(s), {len(view.board.metrics)} metric(s), "
            f"{len(view.board.criteria)} human column(s); {view.counted.text()}",
        }

    outputs = [caption, table, agreement, agreement_note, mask_note, plot, files, message]
    run.click(on_run, [dataset, by, n_boot, raters], outputs, api_name="leaderboard")


def _mask_note(view: LeaderboardView) -> str:
    """The mask-dependence lines under the tables (`mask_notes`), as Markdown; empty when no value carries a check."""
    lines = mask_notes(view)
    if not lines:
        return ""
    return "**Mask dependence** (the values' mask-sensitivity checks):\n\n" + "\n".join(f"- {line}" for line in lines)


def write_files(view: LeaderboardView, folder: Path) -> list[Path]:
    """The leaderboard as the CLI writes it with `-o`: `<stem>.md`, `<stem>.csv` + `<stem>-rank-agreement.csv`
    (when there is a human column), `<stem>.tex`; the stem names the dataset (made file-name safe) and grouping."""
    stem = (
        "leaderboard-"
        + re.sub(r"[^A-Za-z0-9._-]+", "-", view.dataset or "all").strip("-.")[:60]
        + f"-by-{view.board.by}"
    )
    out = []
    for fmt, suffix in (("md", ".md"), ("csv", ".csv"), ("latex", ".tex")):
        path = folder / f"{stem}{suffix}"
        path.write_text(view.render(fmt), encoding="utf-8")
        out.append(path)
        if fmt == "csv" and view.board.agreement:
            second = folder / f"{stem}-rank-agreement.csv"
            second.write_text(view.rank_agreement_csv(), encoding="utf-8")
            out.append(second)
    return out
