"""Browse's pairwise judgments export (admins): the file `masc-ui export --pairwise` writes (`Browse.export_pairwise`,
same use case, same columns), for the dataset chosen in Browse, with the rating history (every earlier revision
of a judgment) and the time on task (seconds per answer) as options. The message sits next to the button."""

from __future__ import annotations

import gradio as gr

from ..errors import WorkbenchError
from ..workbench import Workbench
from ..workbench.browse import PAIRWISE_EXPORT_FORMATS
from .feedback import warn
from .users import user_of


def build(wb: Workbench, dataset: gr.Dropdown) -> None:
    """The section's controls, below Browse's sample export; `dataset` is Browse's dataset filter (empty: all)."""
    with gr.Row(equal_height=False, elem_id="pair-export-row"):
        fmt = gr.Radio(
            list(PAIRWISE_EXPORT_FORMATS),
            value="csv",
            label="Pairwise judgments format",
            elem_id="pair-export-format",
            min_width=160,
            info="one row per rater, pair and criterion (the Rate pairs tab's answers and imported ones)",
        )
        with gr.Column(min_width=220, scale=1):
            history = gr.Checkbox(
                False,
                label="Rating history (earlier answers too)",
                elem_id="pair-export-history",
                info="every changed answer's earlier revisions as rows; columns current, replaced_at",
            )
            time_on_task = gr.Checkbox(
                True,
                label="Time on task (seconds per answer)",
                elem_id="pair-export-time",
            )
        export = gr.Button("Export pairwise judgments", elem_id="pair-export", min_width=200)
        download = gr.File(label="Download", interactive=False, elem_id="pair-export-file", min_width=200, height=110)
    message = gr.Markdown(elem_id="pair-export-message", elem_classes=["action-message"])

    def on_export(kind, ds, with_history, with_time, request: gr.Request):
        try:
            path, n = wb.samples.export_pairwise(
                kind,
                user=user_of(request),
                dataset=ds or None,
                folder=wb.scratch.new_folder(),
                history=bool(with_history),
                time_on_task=bool(with_time),
            )
        except WorkbenchError as exc:
            return None, warn(exc)
        rows = "row(s): current answers and their earlier revisions" if with_history else "pairwise judgment(s)"
        return str(path), f"exported {n} {rows} to {path.name} (skips and flags with their reasons included)"

    export.click(on_export, [fmt, dataset, history, time_on_task], [download, message], api_name="export_pairwise")
