"""Agreement tab, for one of two kinds of human judgments (a choice at the top):
- ratings (0-4): the `masc-ui agreement` table for the stored ratings, its plots, and what makes the numbers fragile
  (few samples, one rater) said above them; a failed computation clears what an earlier one showed;
- pairwise (side by side): `masc-ui agreement --pairwise` as tables (`pairwise_report`)."""

from __future__ import annotations

import gradio as gr

from ..errors import WorkbenchError
from ..workbench import Workbench
from ..workbench.agreement import MAX_BOOTSTRAP, TABLE_HEADERS, scatter_series, shown_name, table_rows
from ..workbench.rater_selection import RaterSelection
from . import pairwise_report
from .agreement_plot import agreement_figure
from .feedback import warn
from .users import user_of

ALL = "(all datasets)"
KINDS = [("Ratings (0–4)", "ratings"), ("Pairwise (side by side)", "pairwise")]
"""(label, value) of the kinds of human judgments the tab analyses."""
COLUMN_WIDTHS = ["70px", "110px", "50px", "70px", "80px", "150px", "90px", "90px", "90px", "280px"]
"""Widths of the table's columns (`TABLE_HEADERS`): headers and numbers on one line; a narrow window scrolls the
table inside its box."""


def build(wb: Workbench, page: gr.Tab | None = None):
    """Lay out the tab (inside `page`: the pairwise section's datasets are refreshed when it is opened); returns
    (handler, outputs) that refresh the ratings section's dataset choices (for the tab's select)."""
    kind = gr.Radio(
        KINDS,
        value="ratings",
        label="Human judgments",
        elem_id="agree-kind",
        info="ratings of one output on the 0–4 scale (Rate tab), or choices between two outputs (Rate pairs tab)",
    )
    with gr.Column(elem_id="agree-ratings") as ratings_box:
        on_show, shown = _ratings_section(wb)
    with gr.Column(visible=False, elem_id="agree-pairwise") as pairwise_box:
        pairwise_report.build(wb, page)

    def on_kind(chosen: str):
        return gr.Column(visible=chosen != "pairwise"), gr.Column(visible=chosen == "pairwise")

    kind.change(on_kind, [kind], [ratings_box, pairwise_box], api_name="agreement_kind")
    return on_show, shown


def _ratings_section(wb: Workbench):
    """The ratings (0-4) section; returns (handler, outputs) that refresh its dataset choices."""
    with gr.Row():
        dataset = gr.Dropdown([ALL], value=ALL, label="Dataset", elem_id="agree-dataset", min_width=180)
        criterion = gr.Radio(
            [
                ("concept preservation", "cp"),
                ("prompt following", "pf"),
                ("ImagenHub semantic consistency", "sc"),
                ("ImagenHub perceptual quality", "pq"),
            ],
            value="cp",
            label="Human ratings of",
            elem_id="agree-criterion",
            min_width=260,
        )
        metric = gr.Dropdown(
            [],
            value=None,
            label="Metric for the scatter plot",
            allow_custom_value=True,
            elem_id="agree-metric",
            min_width=180,
        )
        n_boot = gr.Slider(
            0,
            MAX_BOOTSTRAP,
            value=2000,
            step=100,
            label="Bootstrap resamples",
            info=f"0 = no confidence intervals; at most {MAX_BOOTSTRAP:,}",
            elem_id="agree-nboot",
            min_width=200,
        )
        raters = gr.Textbox(
            value="all",
            label="Raters counted",
            info="all · unmarked (all but those the rater report marks) · names: ann,ben",
            max_lines=1,
            elem_id="agree-raters",
            min_width=200,
        )
    with gr.Row(equal_height=True):
        run = gr.Button("Compute agreement", variant="primary", elem_id="agree-run", scale=1, min_width=180)
        message = gr.Markdown(elem_id="agree-message", elem_classes=["action-message"], min_width=240)
    warnings = gr.Markdown(elem_id="agree-warnings")
    table = gr.Dataframe(
        value={"headers": list(TABLE_HEADERS), "data": []},
        interactive=False,
        elem_id="agree-table",
        wrap=True,
        pinned_columns=2,
        column_widths=COLUMN_WIDTHS,
    )
    gr.Markdown("#### Metric vs humans", elem_id="agree-plot-title")
    plot = gr.Plot(show_label=False, elem_id="agree-plot")
    text = gr.Code(label="As printed by `masc-ui agreement`", language=None, elem_id="agree-text")

    def on_run(ds, crit, chosen, boots, who="all", request: gr.Request = None, progress=gr.Progress()):
        try:
            progress(0.1, desc="bootstrapping confidence intervals")
            view = wb.agreement.view(
                user=user_of(request),
                dataset=None if ds in (None, "", ALL) else ds,
                criterion=crit,
                n_boot=int(boots or 0),
                raters=RaterSelection.parse(who),
            )
            names = view.data.metric_names
            if chosen not in names:  # the first metric with something to plot
                with_data = [r.metric for r in view.table.rows if not r.is_human and r.n >= 2]
                chosen = next(iter(with_data + list(names)), None)
            series = scatter_series(view, chosen) if chosen else None
            headers, rows = table_rows(view)
            fig = agreement_figure(view, series, demo=wb.status().is_demo)
        except WorkbenchError as exc:
            return {table: None, text: "", plot: None, warnings: "", message: warn(exc)}
        return {
            table: {"headers": headers, "data": rows},
            text: view.text,
            plot: fig,
            metric: gr.update(choices=[(shown_name(m), m) for m in names], value=chosen),
            warnings: "\n".join(f"- ⚠ {w}" for w in view.warnings),
            message: f"computed on up to {view.samples_used} sample(s) with {int(boots or 0):,} bootstrap resamples; "
            f"{view.counted.text()}",
        }

    run.click(
        on_run,
        [dataset, criterion, metric, n_boot, raters],
        [table, text, plot, metric, warnings, message],
        api_name="agreement",
    )

    def on_show(ds, request: gr.Request):
        try:
            names = wb.agreement.datasets(user=user_of(request))
        except WorkbenchError:
            return gr.update()
        return gr.update(choices=[ALL, *names], value=ds if ds in names else ALL)

    return on_show, [dataset]
